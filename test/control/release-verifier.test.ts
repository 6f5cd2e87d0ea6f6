// Checking a release against its manifest: every kind of difference is found, an unchanged release is
// not hashed again (the per-file cache keyed by size, mtime, ctime and inode), and a file changed too
// recently to trust its timestamps is hashed again ("racily clean", as git calls it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestOf, type FileManifest } from '../../src/control/artifact.js';
import { ReleaseVerifier } from '../../src/control/release-verifier.js';
import { smallRelease } from './support.js';

let dir: string;
let release: string;
let manifest: FileManifest;
before(async () => {
  ({ dir, release, manifest } = await smallRelease('quarry-verifier-'));
});
after(() => { rmSync(dir, { recursive: true, force: true }); });

/** A verifier that trusts every unchanged stamp, however recent: shows what the cache saves. */
const trusting = (): ReleaseVerifier => new ReleaseVerifier(Number.NEGATIVE_INFINITY);

test('an intact release has no differences, and a second check hashes nothing', async () => {
  const v = trusting();
  assert.deepEqual(await v.diff(release, manifest), []);
  assert.equal(v.hashed, 2);
  assert.deepEqual(await v.diff(release, manifest), []);
  assert.equal(v.hashed, 2, 'unchanged stamps: served from the cache');
});

test('a file changed within the racy window is hashed again', async () => {
  // A window of an hour: the files written by this test are inside it, however slow the machine.
  const v = new ReleaseVerifier(3_600_000);
  await v.diff(release, manifest);
  assert.equal(v.hashed, 2);
  await v.diff(release, manifest);
  assert.equal(v.hashed, 4, 'timestamps this recent cannot vouch for the cached hash');
});

test('every kind of difference is found: content (same size), extra, missing, type, link target', async () => {
  const v = new ReleaseVerifier();
  await v.diff(release, manifest);
  const copy = join(dir, 'c');
  mkdirSync(join(copy, 'sub'), { recursive: true });
  writeFileSync(join(copy, 'index.html'), '<p>HELLO</p>'); // same size, other bytes
  mkdirSync(join(copy, 'sub', 'a.css')); // a directory where a file was
  symlinkSync('sub', join(copy, 'home')); // another link target
  writeFileSync(join(copy, 'extra.txt'), 'x');
  assert.deepEqual(await v.diff(copy, manifest), ['extra.txt', 'home', 'index.html', 'sub/a.css']);
  unlinkSync(join(copy, 'extra.txt'));
  rmSync(join(copy, 'sub'), { recursive: true });
  assert.deepEqual(await v.diff(copy, manifest), ['home', 'index.html', 'sub', 'sub/a.css']);
});

test('an edit through the cache is seen: the stamp changes with the content', async () => {
  const v = trusting();
  const own = join(dir, 'own');
  mkdirSync(own);
  writeFileSync(join(own, 'f.txt'), 'one');
  const m = await manifestOf(own);
  assert.deepEqual(await v.diff(own, m), []);
  // Replaced by rename (a new inode), as an editor or a deployment tool would.
  writeFileSync(join(own, 'g.tmp'), 'two');
  renameSync(join(own, 'g.tmp'), join(own, 'f.txt'));
  assert.deepEqual(await v.diff(own, m), ['f.txt']);
});

test('a release directory that does not exist is undefined (incomplete), not a list', async () => {
  assert.equal(await new ReleaseVerifier().diff(join(dir, 'nope'), manifest), undefined);
});
