// A cid collision at ingest never overwrites: with a 3-bit hash every key collides sooner or later, yet
// every document lands under its own cid, and re-ingesting in another order changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index } from '../../src/engine/index.js';
import { CidRegistry, hashKey } from '../../src/corpora/cid.js';
import { ingest, type ReadItem } from '../../src/corpora/ingest.js';
import { openDb } from '../../src/store/db.js';

test('colliding keys get distinct cids and distinct documents, stable across re-ingests', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-collide-'));
  try {
    const db = openDb(join(dir, 'state.sqlite'));
    const registry = new CidRegistry(db, { hash: (k, a) => hashKey(k, a) & 7n });
    const index = await Index.open(join(dir, 'index'));
    const items = (order: number[]): ReadItem[] => order.map((i) => ({ ok: true, doc: { key: `https://c.example/${i}`, url: `https://c.example/${i}`, host: 'c.example', title: `Page ${i}`, text: `page number ${i}` } }));
    const options = { commitEveryDocs: 3, commitEverySeconds: 60, maxTextChars: 1000 };
    const writer = await index.openWriter();
    await ingest(writer, registry, items([0, 1, 2, 3, 4, 5, 6, 7]), options);
    const s = index.searcher();
    assert.equal(s.docCount, 8, 'eight keys, eight documents: none overwrote another');
    const cidOf = new Map<number, bigint>();
    for (let i = 0; i < 8; i++) {
      const hits = s.search(`"page number ${i}"`).hits;
      assert.equal(hits.length, 1);
      assert.equal(s.get(hits[0]!.cid)!.url, `https://c.example/${i}`);
      cidOf.set(i, hits[0]!.cid);
    }
    assert.equal(new Set(cidOf.values()).size, 8);
    // Again, reversed: the recorded resolutions hold, so each page replaces itself.
    await ingest(writer, registry, items([7, 6, 5, 4, 3, 2, 1, 0]), options);
    const s2 = index.searcher();
    assert.equal(s2.docCount, 8);
    for (let i = 0; i < 8; i++) assert.equal(s2.get(cidOf.get(i)!)!.title, `Page ${i}`);
    await writer.close();
    await index.close();
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
