// The corpora configuration: defaults, relative paths, and errors that name the field at fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCorporaConfig, resolveCorporaConfig } from '../../src/corpora/config.js';

test('defaults: repo docs and site, the man pages when present, bounded', () => {
  const c = resolveCorporaConfig(undefined, '/x', { repoRoot: '/repo', libraryDir: '/nonexistent-man' });
  assert.equal(c.own.docs, '/repo/docs');
  assert.equal(c.own.site, '/repo/site');
  assert.equal(c.own.library, null, 'no man pages, no library');
  const d = resolveCorporaConfig({}, '/x', { repoRoot: '/repo', libraryDir: tmpdir() });
  assert.deepEqual(d.own.library, { dir: tmpdir(), sections: ['1', '8'], maxDocs: 4000, commandsOnly: true });
  assert.ok(d.ingest.commitEveryDocs > 0 && d.ingest.commitEverySeconds > 0);
});

test('relative paths resolve against the file; null turns a source off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-config-'));
  try {
    const file = join(dir, 'corpora.json');
    writeFileSync(file, JSON.stringify({ own: { docs: 'mydocs', site: null, library: { dir: 'lib', sections: ['1'], maxDocs: 0 } }, ingest: { commitEveryDocs: 10 } }));
    const c = loadCorporaConfig(file);
    assert.equal(c.own.docs, join(dir, 'mydocs'));
    assert.equal(c.own.site, null);
    assert.deepEqual(c.own.library, { dir: join(dir, 'lib'), sections: ['1'], maxDocs: 0, commandsOnly: true });
    assert.equal(c.ingest.commitEveryDocs, 10);
    // Absent default file → defaults; absent named file → error.
    assert.ok(loadCorporaConfig(join(dir, 'none.json'), { optional: true }));
    assert.throws(() => loadCorporaConfig(join(dir, 'none.json')), (e: any) => e.code === 'bad_request' && e.param === 'config');
    writeFileSync(file, '{"own": ');
    assert.throws(() => loadCorporaConfig(file), /not valid JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every mistake names its field', () => {
  const cases: [unknown, string][] = [
    [[], '(root)'],
    [{ owner: {} }, 'owner'],
    [{ own: { docs: 3 } }, 'own.docs'],
    [{ own: { extra: 1 } }, 'own.extra'],
    [{ own: { library: { sections: ['1', 'a b'] } } }, 'own.library.sections[1]'],
    [{ own: { library: { maxDocs: -1 } } }, 'own.library.maxDocs'],
    [{ own: { library: 7 } }, 'own.library'],
    [{ ingest: { commitEveryDocs: 0 } }, 'ingest.commitEveryDocs'],
    [{ ingest: { commitEverySeconds: 'soon' } }, 'ingest.commitEverySeconds'],
    [{ refreshIntervalMs: 1 }, 'refreshIntervalMs'],
  ];
  for (const [value, param] of cases) {
    assert.throws(() => resolveCorporaConfig(value, '/x'), (e: any) => e.code === 'bad_request' && e.param === param && e.message.includes(param), param);
  }
});
