/**
 * Long natural-language queries, timed: 300-word queries cut from the collection's own documents (a
 * pasted paragraph is the worst case: every word is in the corpus, many repeat), run through
 * `Searcher.search` (20 hits, exact total, no snippets) under each disjunction plan (CPU time), with the
 * common-terms rule (docs/ranking.md) and without it. Prints p50/p95/p99 in ms and the mean total.
 *
 *   node --import tsx bench/long-queries.ts [collection-dir|corpus.jsonl] [--words=300] [--queries=100]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCollectionPath, loadCollection, plainQuery } from './dataset.js';
import { Index, createSearcher } from '../src/engine/index.js';

const args = process.argv.slice(2);
const path = args.find((a) => !a.startsWith('--')) ?? defaultCollectionPath('scifact');
if (!path) throw new Error('No collection: pass its directory (BEIR layout) or a JSONL file.');
const flag = (name: string, def: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const WORDS = flag('words', 300);
const QUERIES = flag('queries', 100);

const collection = await loadCollection(path);
const dir = mkdtempSync(join(tmpdir(), 'quarry-long-queries-'));
try {
  const index = await Index.open(dir);
  const w = await index.openWriter();
  collection.docs.forEach((d, i) => w.upsert({ cid: BigInt(i + 1), title: d.title, text: d.text }));
  await w.commit();
  await w.close();
  await index.refresh();

  // every k-th document's text, words joined until WORDS words (several documents when one is short)
  const queries: string[] = [];
  const step = Math.max(1, Math.floor(collection.docs.length / QUERIES));
  for (let i = 0; queries.length < QUERIES && i < collection.docs.length; i += step) {
    const words: string[] = [];
    for (let j = i; words.length < WORDS && j < collection.docs.length; j++) words.push(...plainQuery(collection.docs[j]!.text).split(' ').filter(Boolean));
    let q = words.slice(0, WORDS).join(' ');
    while (Buffer.byteLength(q) > 4096) q = q.slice(0, q.lastIndexOf(' '));
    queries.push(q);
  }
  const segments = [...index.snapshot().segments];
  console.log(`# ${collection.name}: ${collection.docs.length} docs, ${queries.length} queries of ≤ ${WORDS} words (≤ 4 KiB), top 20, exact total`);
  console.log('| plan | common-terms rule | p50 ms | p95 ms | p99 ms | mean total |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const plan of ['auto', 'maxscore', 'accumulate'] as const) {
    for (const ratio of [undefined, 1]) {
      const s = createSearcher(segments, 1, { plan, ...(ratio === undefined ? {} : { commonTermRatio: ratio }) });
      for (const q of queries) s.search(q, { snippets: false }); // warm-up: compiled code, cached df and norms
      const ms: number[] = [];
      let total = 0;
      for (const q of queries) {
        // CPU time of this process: less disturbed than wall time by the other processes of a shared machine
        const t0 = process.cpuUsage();
        total += s.search(q, { snippets: false }).total;
        const t = process.cpuUsage(t0);
        ms.push((t.user + t.system) / 1000);
      }
      ms.sort((a, b) => a - b);
      const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(2);
      console.log(`| ${plan} | ${ratio === undefined ? 'on' : 'off'} | ${at(0.5)} | ${at(0.95)} | ${at(0.99)} | ${Math.round(total / queries.length)} |`);
    }
  }
  await index.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
