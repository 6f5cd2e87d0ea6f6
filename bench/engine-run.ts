/**
 * One engine's run of the speed benchmark, alone in its own process so its peak memory is its own:
 * load the corpus, build (timed), measure the index, run every query once to warm up, then once more
 * timed, one at a time. Writes a JSON report to the file named by the last argument.
 *
 *   node --import tsx bench/engine-run.ts <engine> <corpus path> <queries.json> <report.json>
 *
 * queries.json: `[{id, q}]` in plain form (bench/dataset.ts `plainQuery`); `judged` ids get their top
 * 10 reported (as corpus `_id`s) so the parent can score each engine's relevance.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadCollection } from './dataset.js';
import { memory } from './measure.js';
import type { BenchEngine } from './engines/types.js';

async function engineByName(name: string): Promise<BenchEngine> {
  switch (name) {
    case 'quarry': return (await import('./engines/quarry.js')).create();
    case 'quarry+snippets': return (await import('./engines/quarry.js')).create({ snippets: true });
    case 'minisearch': return (await import('./engines/minisearch.js')).create();
    case 'flexsearch': return (await import('./engines/flexsearch.js')).create();
    case 'lunr': return (await import('./engines/lunr.js')).create();
    case 'orama': return (await import('./engines/orama.js')).create();
    case 'sqlite-fts5': return (await import('./engines/fts5.js')).create();
    default: throw new Error(`unknown engine ${JSON.stringify(name)}`);
  }
}

export interface RunReport {
  engine: string;
  method: string;
  docs: number;
  textBytes: number;
  buildMs: number;
  /** CPU time of this process during the build (user + system): the build's cost on a shared machine. */
  buildCpuMs: number;
  indexBytes: number;
  rssAfterLoad: number;
  peakRss: number;
  /** Per query, in the given order: latency of the timed pass (ms), total, and top-10 ids when judged. */
  latenciesMs: number[];
  /** CPU time (user + system, µs resolution) of each query of the timed pass, in ms. */
  cpuMs: number[];
  totals: number[];
  top10: Record<string, string[]>;
}

async function main(): Promise<void> {
  const [name, corpusPath, queriesPath, reportPath] = process.argv.slice(2);
  if (!name || !corpusPath || !queriesPath || !reportPath) throw new Error('usage: engine-run <engine> <corpus> <queries.json> <report.json>');
  const { queries, judged } = JSON.parse(readFileSync(queriesPath, 'utf8')) as { queries: { id: string; q: string }[]; judged: string[] };
  const judgedSet = new Set(judged);
  const { docs } = await loadCollection(corpusPath);
  let textBytes = 0;
  for (const d of docs) textBytes += Buffer.byteLength(d.title) + Buffer.byteLength(d.text);
  const engine = await engineByName(name);
  const rssAfterLoad = memory().rss;

  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await engine.build(docs);
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const c1 = process.cpuUsage(c0);
  const buildCpuMs = (c1.user + c1.system) / 1000;
  const indexBytes = await engine.bytes();

  for (const { q } of queries) await engine.search(q); // warm-up pass
  const latenciesMs: number[] = [];
  const cpuMs: number[] = [];
  const totals: number[] = [];
  const top10: Record<string, string[]> = {};
  for (const { id, q } of queries) {
    const cpu = process.cpuUsage();
    const s = process.hrtime.bigint();
    let r = engine.search(q);
    if (r instanceof Promise) r = await r;
    latenciesMs.push(Number(process.hrtime.bigint() - s) / 1e6);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
    totals.push(r.total);
    if (judgedSet.has(id)) top10[id] = r.top.slice(0, 10).map((i) => docs[i]!.id);
  }
  const report: RunReport = {
    engine: engine.name, method: engine.method, docs: docs.length, textBytes, buildMs, buildCpuMs, indexBytes,
    rssAfterLoad, peakRss: memory().peak, latenciesMs, cpuMs, totals, top10,
  };
  await engine.close();
  writeFileSync(reportPath, JSON.stringify(report));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
