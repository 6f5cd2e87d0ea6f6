// `quarry crawl` as a command: a configuration mistake is a usage failure naming the field, hostile
// seeds are refused with their reason, and a finished run prints its summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const quarry = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

test('quarry crawl: configuration errors by field, refused seeds, a summary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-crawl-cli-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ crawl: { concurrency: 0 } }));
    const r1 = quarry(['crawl', '--data', join(dir, 'data'), '--config', bad]);
    assert.equal(r1.status, 2, r1.stderr);
    assert.match(r1.stderr, /crawl\.concurrency must be a number/);

    const r2 = quarry(['crawl', '--data', join(dir, 'data'), '--concurrency', 'many']);
    assert.equal(r2.status, 2);
    assert.match(r2.stderr, /--concurrency must be an integer/);

    const seeds = join(dir, 'seeds.txt');
    writeFileSync(seeds, '# hostile seeds\nfile:///etc/passwd\nftp://example.com/\n\nhttp://127.0.0.1/admin\n');
    const r3 = quarry(['crawl', '--data', join(dir, 'data'), '--seeds', seeds, '--json']);
    assert.equal(r3.status, 0, r3.stderr);
    const lines = r3.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.deepEqual(lines.filter((l) => l.event === 'refused').map((l) => l.url), ['file:///etc/passwd', 'ftp://example.com/']);
    const done = lines.find((l) => l.event === 'done');
    assert.equal(done.pages, 0, 'loopback is refused at fetch time without allowPrivateNetworks');
    assert.equal(done.requests, 0);

    const r4 = quarry(['crawl', '--data', join(dir, 'data')]);
    assert.equal(r4.status, 0, r4.stderr);
    assert.match(r4.stdout, /fetched 0 pages .* the web corpus has 0 documents/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
