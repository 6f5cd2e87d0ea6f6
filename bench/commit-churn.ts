/**
 * Queries while documents arrive. An ingest or a crawl commits every few seconds (`ingest.commitEverySeconds`,
 * 5 by default), and each commit gives queries a new searcher over a snapshot whose statistics changed;
 * what a searcher derives from its segments must then be recomputed or carried over. This runs the scale
 * bench's 1–3-word and title queries on a kept index, after one untimed pass, twice: with no commit, then
 * with a commit of one new document before every `--every`-th query; each query is timed on the searcher
 * of the newest commit. The index is copied to a temporary directory first (the commits change it).
 *
 *   npm run bench:corpus -- <corpus.jsonl> [--docs N] --queries 1000 --keep <dir>
 *   node --import tsx bench/commit-churn.ts <dir> [--every 100] [--checkout <repository checkout>]
 *
 * `--checkout` times another version of the engine (its `src/engine/index.ts`, compiled by tsx as this
 * one is; see bench/query-ab.ts for making a worktree of another commit). `--suggest` times completions
 * instead of searches: `suggest` of each query's first three characters, as a search box asks them.
 * `--warm` calls `Index.warm()` after each commit, untimed, as a search worker does when it adopts one.
 *
 *   node --import tsx bench/commit-churn.ts <dir> [--every 100] [--checkout <dir>] [--suggest] [--warm]
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile } from './measure.js';
import { commandLine } from './command-line.js';

interface Query { kind: string; q: string }

const { option, flag, positional: [dir] } = commandLine(['suggest', 'warm']);
if (dir === undefined) {
  console.error('usage: node --import tsx bench/commit-churn.ts <kept scale-run dir> [--every 100] [--checkout <dir>] [--suggest] [--warm]');
  process.exit(2);
}
const every = Number(option('every') ?? 100);
if (!Number.isInteger(every) || every < 1) throw new Error('commit-churn: --every must be a positive integer');
const checkout = resolve(option('checkout') ?? '.');
const suggest = flag('suggest');
const warm = flag('warm');
const mod = await import(pathToFileURL(join(checkout, 'src/engine/index.ts')).href) as typeof import('../src/engine/index.js');

const queries = (JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8')) as Query[]).filter((q) => q.kind === '1–3 words' || q.kind === 'titles');
const work = mkdtempSync(join(tmpdir(), 'quarry-commit-churn-'));
try {
  cpSync(join(dir, 'quarry'), work, { recursive: true });
  const index = await mod.Index.open(work);
  const writer = await index.openWriter();
  const ask = suggest
    ? (q: string) => { index.searcher().suggest(q.slice(0, 3).trim() || q); }
    : (q: string) => { index.searcher().search(q, { snippets: false }); };
  for (const { q } of queries) ask(q);
  console.log(`# commit-churn: ${dir}, ${queries.length} ${suggest ? 'completions' : 'queries'}${warm ? ', the index warmed after each commit' : ''}, engine of ${checkout}\n`);
  console.log('| commits | p50 ms | p90 ms | p99 ms | max ms | mean ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  let added = 0;
  for (const commits of [false, true]) {
    const ms: number[] = [];
    for (const [i, { q }] of queries.entries()) {
      if (commits && i % every === 0) {
        added++;
        writer.upsert({ cid: BigInt(2 ** 53) + BigInt(added), title: `Arrival ${added}`, text: `A page that arrived while ${q} was asked.`, url: `https://arrivals.test/${added}` });
        await writer.commit();
        if (warm) index.warm();
      }
      const t0 = performance.now();
      ask(q);
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
    const f = (x: number) => x.toFixed(2);
    console.log(`| ${commits ? `one document every ${every} queries` : 'none'} | ${f(percentile(ms, 50))} | ${f(percentile(ms, 90))} | ${f(percentile(ms, 99))} | ${f(ms[ms.length - 1]!)} | ${f(mean)} |`);
  }
  await writer.close();
  await index.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
