// The release checks of the server run on a thread of their own at the lowest CPU priority: they find
// what the verifier finds, keep its hash cache between checks, say "unverifiable" for a missing manifest
// or release, and fail, rather than hang, once the checker is closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReleaseChecker } from '../../src/control/release-checker.js';
import { smallRelease } from './support.js';

let dir: string;
let release: string;
let manifestPath: string;
before(async () => {
  let manifest;
  ({ dir, release, manifest } = await smallRelease('quarry-checker-'));
  manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify({ files: manifest }));
  // Past the verifier's racy window (1 s): from now on the files' stamps are trusted.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
});
after(() => { rmSync(dir, { recursive: true, force: true }); });

/** Nice values of this process's threads (Linux: the 19th field of each task's stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('a check on the thread finds changes, and an unchanged release is not hashed again', async () => {
  const checker = new ReleaseChecker();
  try {
    assert.deepEqual(await checker.check(manifestPath, release), []);
    assert.equal(await checker.hashed(), 2);
    assert.deepEqual(await checker.check(manifestPath, release), []);
    assert.equal(await checker.hashed(), 2, 'unchanged stamps: served from the thread\'s cache');
    writeFileSync(join(release, 'sub', 'a.css'), 'b{}');
    writeFileSync(join(release, 'extra.txt'), 'x');
    assert.deepEqual(await checker.check(manifestPath, release), ['extra.txt', 'sub/a.css']);
    rmSync(join(release, 'extra.txt'));
    writeFileSync(join(release, 'sub', 'a.css'), 'a{}');
  } finally {
    await checker.close();
  }
});

test('a missing manifest or release cannot be verified', async () => {
  const checker = new ReleaseChecker();
  try {
    assert.equal(await checker.check(join(dir, 'no-manifest.json'), release), undefined);
    assert.equal(await checker.check(manifestPath, join(dir, 'no-release')), undefined);
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    assert.equal(await checker.check(join(dir, 'broken.json'), release), undefined);
  } finally {
    await checker.close();
  }
});

test('the check thread runs at the lowest CPU priority, and a closed checker refuses checks', async () => {
  assert.equal(process.platform, 'linux', 'thread priorities are read from /proc');
  const before = threadNiceValues().filter((n) => n === 19).length;
  const checker = new ReleaseChecker();
  await checker.check(manifestPath, release);
  assert.equal(threadNiceValues().filter((n) => n === 19).length, before + 1, 'one more thread at nice 19');
  assert.ok(threadNiceValues().some((n) => n !== 19), 'the other threads keep their priority');
  await checker.close();
  await assert.rejects(checker.check(manifestPath, release), /closed/);
});
