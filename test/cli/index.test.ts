// `quarry index` as a real process: first run indexes the configured sources, the second reuses the
// index, --full reads everything again; read commands (search, suggest, stats) on the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function quarry(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/quarry.js'), ...args], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000,
  });
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, lines };
}

test('quarry index: first run, reuse, --full; then search, suggest and stats read the result', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-cli-index-'));
  try {
    const docs = join(dir, 'handbook');
    mkdirSync(docs);
    writeFileSync(join(docs, 'a.md'), '# Basalt columns\n\nBasalt cools into hexagonal columns.\n');
    writeFileSync(join(docs, 'b.html'), '<title>Basin</title><p>A basin of basaltic rock.</p>');
    // A service configuration file with a `corpora` member, relative paths from its directory.
    const config = join(dir, 'quarry.json');
    writeFileSync(config, JSON.stringify({ server: { port: 1 }, corpora: { own: { docs: 'handbook', site: null, library: null } } }));
    const data = join(dir, 'data');

    const first = quarry(['index', '--data', data, '--config', config, '--json']);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual([first.lines[0].reused, first.lines[0].indexed, first.lines[0].docs], [false, 2, 2]);
    const second = quarry(['index', '--config', config, '--json'], { QUARRY_DATA: data });
    assert.deepEqual([second.lines[0].reused, second.lines[0].indexed, second.lines[0].generation], [true, 0, first.lines[0].generation]);
    const prose = quarry(['index', '--data', data, '--config', config]);
    assert.match(prose.stdout, /The own corpus is up to date: 2 documents from 2 source files/);
    const full = quarry(['index', '--data', data, '--config', config, '--full', '--json']);
    assert.deepEqual([full.lines[0].reused, full.lines[0].indexed, full.lines[0].docs], [false, 2, 2]);

    const s = quarry(['search', '--data', data, 'basalt']);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /^2 results for "basalt" in own \(1–2\)/);
    assert.match(s.stdout, /Basalt columns/);
    const sj = quarry(['search', '--data', data, '--json', '"hexagonal columns"']);
    assert.equal(sj.lines[0].total, 1);
    assert.equal(sj.lines[0].phrase_exact, true);
    assert.match(sj.lines[0].results[0].doc, /^\/api\/doc\?cid=\d+$/);
    const sug = quarry(['suggest', '--data', data, '--json', 'bas']);
    assert.deepEqual(sug.lines[0], { v: 1, prefix: 'bas', suggestions: ['basalt', 'basaltic', 'basin'] });
    const st = quarry(['stats', '--data', data, '--corpus', 'own']);
    assert.match(st.stdout, /own\s+2\s/);
    assert.equal(quarry(['index', '--data', data, 'extra']).code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
