// A corpus whose index cannot be read does not take the others down: own is set aside and rebuilt from
// its sources, web answers `unavailable` (and shows `failed`) while trusted keeps serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCorpora } from '../../src/corpora/corpora.js';
import { resolveCorporaConfig } from '../../src/corpora/config.js';

test('an unreadable own index is rebuilt, an unreadable web index is unavailable, trusted serves on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-unreadable-'));
  try {
    const docs = join(dir, 'docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'a.md'), '# Gneiss\n\nBanded metamorphic rock.\n');
    const resolved = resolveCorporaConfig({ own: { docs, site: null, library: null } }, dir);
    const data = join(dir, 'data');
    let corpora = await openCorpora({ dataDir: data, resolved });
    await corpora.ensureOwnIndexed();
    const item = (scope: string) => ({ ok: true as const, doc: { key: `id:${scope}/1`, title: 'Schist', text: 'foliated schist' } });
    await corpora.ingest('web', [item('web')]);
    await corpora.ingest('trusted', [item('trusted')]);
    await corpora.close();

    for (const scope of ['own', 'web']) writeFileSync(join(data, 'index', scope, 'MANIFEST'), 'this is not a manifest');
    corpora = await openCorpora({ dataDir: data, resolved });
    try {
      assert.equal(corpora.searcher('trusted').search('schist').total, 1);
      assert.throws(() => corpora.searcher('web'), (e: any) => e.code === 'unavailable' && /web index cannot be read/.test(e.message));
      await assert.rejects(corpora.ingest('web', [item('web')]), (e: any) => e.code === 'unavailable');
      const status = corpora.status();
      assert.equal(status.web.state, 'failed');
      assert.ok(status.web.error);
      assert.equal(status.trusted.state, 'ready');
      // own: set aside (kept, not deleted) and rebuilt from its sources.
      assert.ok(readdirSync(join(data, 'index')).some((n) => n.startsWith('own.unreadable-')));
      assert.ok(existsSync(join(data, 'index', 'web', 'MANIFEST')), 'web is left as it is for the operator');
      const r = await corpora.ensureOwnIndexed();
      assert.equal(r.reused, false);
      assert.equal(corpora.searcher('own').search('gneiss').total, 1);
    } finally {
      await corpora.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
