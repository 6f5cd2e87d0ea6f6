// The own corpus: indexed from its configured sources on first start, reused at once when nothing
// changed, and brought up to date file by file when something did; progress and commits on the bus.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { openCorpora } from '../../src/corpora/corpora.js';
import { resolveCorporaConfig } from '../../src/corpora/config.js';
import { hashKey } from '../../src/corpora/cid.js';
import { EventBus } from '../../src/events/bus.js';

function fixture(root: string) {
  const docs = join(root, 'docs');
  const site = join(root, 'site');
  const man = join(root, 'man');
  mkdirSync(join(docs, 'guide'), { recursive: true });
  mkdirSync(site);
  mkdirSync(join(man, 'man1'), { recursive: true });
  mkdirSync(join(man, 'man8'));
  writeFileSync(join(docs, 'intro.md'), '# Introduction\n\nQuarry is a **search engine** with a zebra mascot.\n');
  writeFileSync(join(docs, 'guide', 'install.html'), '<title>Installing</title><p>Run npm ci and then npm start.</p>');
  writeFileSync(join(docs, 'notes.txt'), 'Release notes\n\nThe aardvark release.\n');
  writeFileSync(join(docs, 'image.png'), 'not a document');
  writeFileSync(join(site, 'index.html'), '<title>Quarry home</title><p>Welcome, walrus.</p>');
  writeFileSync(join(man, 'man1', 'frob.1.gz'), gzipSync('.TH FROB 1\n.SH NAME\nfrob \\- frobnicate the quokka\n.SH DESCRIPTION\n.B frob\nfrobnicates.\n'));
  writeFileSync(join(man, 'man1', 'alias.1.gz'), gzipSync('.so man1/frob.1\n'));
  writeFileSync(join(man, 'man8', 'frobd.8'), '.TH FROBD 8\n.SH NAME\nfrobd \\- the frob daemon\n');
  const config = resolveCorporaConfig({
    own: { docs, site, library: { dir: man, sections: ['1', '8'], commandsOnly: false } },
    ingest: { commitEveryDocs: 2 },
  }, root);
  return { docs, site, man, config };
}

test('first start indexes every source, the second reuses the index at once, changes are applied file by file', async () => {
  const root = mkdtempSync(join(tmpdir(), 'quarry-own-'));
  try {
    const { docs, config } = fixture(root);
    const dataDir = join(root, 'data');
    const bus = new EventBus();
    const events: { kind: string; data: any }[] = [];
    bus.subscribe((e) => events.push({ kind: e.kind, data: e.data }));

    let corpora = await openCorpora({ dataDir, resolved: config, bus, progressIntervalMs: 0 });
    const progress: number[] = [];
    const first = await corpora.ensureOwnIndexed((p) => progress.push(p.done));
    assert.equal(first.reused, false);
    assert.equal(first.files, 7, 'md, html, txt, site page, three man pages; the png is not a document');
    assert.equal(first.report?.skipped, 1, 'the .so alias page has no text');
    assert.equal(progress.at(-1), 7);
    const s = corpora.searcher('own');
    assert.equal(s.docCount, 6);
    for (const [q, title] of [['zebra', 'Introduction'], ['npm', 'Installing'], ['aardvark', 'Release notes'], ['walrus', 'Quarry home'], ['quokka', 'frob(1) — frobnicate the quokka'], ['daemon', 'frobd(8) — the frob daemon']] as const) {
      const r = s.search(q);
      assert.equal(r.total, 1, q);
      assert.equal(r.hits[0]!.title, title);
    }
    assert.equal(s.search('zebra').hits[0]!.cid, hashKey('file:docs/intro.md'), 'the cid is the hash of the source-relative path');
    const committed = events.filter((e) => e.kind === 'index.committed' && e.data.scope === 'own');
    assert.ok(committed.length >= 3, 'commits every 2 documents');
    assert.equal(committed.at(-1)!.data.docs, 6);
    assert.ok(events.some((e) => e.kind === 'index.progress' && e.data.scope === 'own' && e.data.total === 7));
    const snap = bus.snapshot().index as any;
    assert.equal(snap.own.docs, 6);
    assert.equal(snap.own.state, 'ready');
    assert.equal(snap.web.docs, 0);
    const generation = s.generation;
    await corpora.close();

    // Second start: nothing changed, nothing is read, no commit is made.
    corpora = await openCorpora({ dataDir, resolved: config });
    const second = await corpora.ensureOwnIndexed();
    assert.equal(second.reused, true);
    assert.equal(corpora.searcher('own').generation, generation);
    assert.equal(corpora.searcher('own').docCount, 6);

    // One file changed, one removed, one added.
    writeFileSync(join(docs, 'intro.md'), '# Introduction\n\nQuarry now has an okapi mascot.\n');
    utimesSync(join(docs, 'intro.md'), new Date(), new Date(Date.now() + 5000));
    unlinkSync(join(docs, 'notes.txt'));
    writeFileSync(join(docs, 'new.md'), '# New page\n\nAbout the narwhal.\n');
    const third = await corpora.ensureOwnIndexed();
    assert.deepEqual([third.reused, third.changed, third.removed], [false, 2, 1]);
    const s3 = corpora.searcher('own');
    assert.equal(s3.docCount, 6);
    assert.equal(s3.search('zebra').total, 0);
    assert.equal(s3.search('okapi').hits[0]!.cid, hashKey('file:docs/intro.md'), 'same file, same cid');
    assert.equal(s3.search('aardvark').total, 0);
    assert.equal(s3.search('narwhal').total, 1);
    await corpora.close();
    await corpora.close(); // idempotent
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
