/**
 * Quarry and a peer query by query, on the indexes a scale run kept:
 *
 *   npm run bench:corpus -- <corpus.jsonl> [--docs N] --queries 1000 --peers lucene --keep <dir>
 *   node --import tsx bench/per-query.ts <dir> [--peer lucene] [--reps 7] [--kinds titles,1–3 words] [--worst 15]
 *
 * The scale bench times each query once, after one untimed pass over all of them: its medians move by
 * 10–25 % between runs (docs/benchmarks.md), more than the differences left to read. Here each query is
 * run `--reps` times in a row by each engine (the peer in its own process, as the scale bench runs it,
 * after its own untimed pass) and its median kept; a kind's figure is the median of those.
 *
 * The queries are the kept run's own (`<dir>/queries.json`). Lucene drops its English stop words and
 * Quarry does not, so for some queries the two answer different questions ("the battle" is "battle" to
 * Lucene; "and" is no query at all): the report splits each kind by whether the peer's exact total is
 * Quarry's within 5 % (the same documents match), and lists the queries Quarry trails the peer most in.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Index } from '../src/engine/index.js';
import { EXTERNAL_PEERS, servePeer } from './peers/external.js';
import { commandLine } from './command-line.js';

interface Query { kind: string; q: string }
/** `peerSearch`: the peer's search alone (undefined when the peer does not time it apart). */
interface Row { q: string; quarry: number; peer: number; peerSearch: number | undefined; peerExact: number; total: number; peerTotal: number }

const { option, positional: [dir] } = commandLine();
if (dir === undefined) {
  console.error('usage: node --import tsx bench/per-query.ts <kept scale-run dir> [--peer lucene] [--reps 7] [--kinds titles,1–3 words] [--worst 15]');
  process.exit(2);
}
const peerName = option('peer') ?? 'lucene';
const peer = EXTERNAL_PEERS.find((p) => p.name === peerName);
if (peer === undefined) throw new Error(`per-query: no peer named ${peerName}`);
const missing = peer.missing();
if (missing !== undefined) throw new Error(`per-query: ${missing}`);
const reps = Number(option('reps') ?? 7);
const kinds = (option('kinds') ?? '1–3 words,titles').split(',');
const worst = Number(option('worst') ?? 15);
const queries = (JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8')) as Query[]).filter((q) => kinds.includes(q.kind));

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

const index = await Index.open(join(dir, 'quarry'));
const searcher = index.searcher();
for (const { q } of queries) searcher.search(q, { snippets: false });
const quarry = queries.map(({ q }) => {
  const ms: number[] = [];
  let total = 0;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    total = searcher.search(q, { snippets: false }).total;
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), total };
});
await index.close();

// every query `reps` times in a row, so the peer's timings of one query are consecutive in its report
const served = await servePeer(peer, dir, join(dir, peer.name), queries.flatMap((q) => Array<Query>(reps).fill(q)));
const rowsOf = (kind: string): Row[] => {
  const at = queries.flatMap((q, i) => (q.kind === kind ? [i] : []));
  const timing = (exact: boolean) => served.timings.find((t) => t.kind === kind && t.exactTotal === exact)!;
  const [fast, exact] = [timing(false), timing(true)];
  const per = (xs: number[], j: number) => median(xs.slice(j * reps, (j + 1) * reps));
  return at.map((i, j) => ({
    q: queries[i]!.q, quarry: quarry[i]!.ms, peer: per(fast.ms, j), peerSearch: fast.searchMs === undefined ? undefined : per(fast.searchMs, j), peerExact: per(exact.ms, j),
    total: quarry[i]!.total, peerTotal: exact.totals[j * reps]!,
  }));
};

const ms = (x: number) => x.toFixed(3);
console.log(`# per-query medians of ${reps} runs: ${dir}, Quarry vs ${peer.name} (from query text to hits; its default collector; "search only": the parsed query searched, no hit read; "exact": counting every match)\n`);
console.log(`| queries | n | Quarry p50 ms | ${peer.name} p50 | ${peer.name} search only p50 | ${peer.name} exact p50 |`);
console.log('|---|---:|---:|---:|---:|---:|');
const worstRows: Row[] = [];
for (const kind of kinds) {
  const rows = rowsOf(kind);
  const same = rows.filter((r) => r.total > 0 && Math.abs(r.peerTotal - r.total) <= 0.05 * r.total);
  const other = rows.filter((r) => !same.includes(r));
  for (const [label, part] of [[kind, rows], [`${kind}, same matches`, same], [`${kind}, others`, other]] as const) {
    if (part.length === 0) continue;
    console.log(`| ${label} | ${part.length} | ${ms(median(part.map((r) => r.quarry)))} | ${ms(median(part.map((r) => r.peer)))} | ${part[0]!.peerSearch === undefined ? '–' : ms(median(part.map((r) => r.peerSearch!)))} | ${ms(median(part.map((r) => r.peerExact)))} |`);
  }
  worstRows.push(...rows);
}
worstRows.sort((a, b) => (b.quarry - b.peer) - (a.quarry - a.peer));
console.log(`\nQuarry behind ${peer.name} the most (ms: Quarry, ${peer.name}, exact; totals: Quarry, ${peer.name} exact):\n`);
for (const r of worstRows.slice(0, worst)) {
  console.log(`${ms(r.quarry).padStart(8)} ${ms(r.peer).padStart(8)} ${ms(r.peerExact).padStart(8)} ${String(r.total).padStart(8)} ${String(r.peerTotal).padStart(8)}  ${r.q.slice(0, 70)}`);
}
