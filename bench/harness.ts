/**
 * The comparative speed benchmark's driver: runs each engine in its own child process (bench/engine-run.ts)
 * one after the other on the same corpus and the same queries, then tabulates build time, index size,
 * peak memory, latency percentiles and Quarry's ratio to each peer. Shared by `npm run bench` (a
 * BEIR-layout or JSONL collection) and `npm run bench:corpus` (the Debian-docs corpus).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, type Qrels } from './dataset.js';
import { fmt, MB, percentile } from './measure.js';
import { ndcgAt } from './metrics.js';
import type { RunReport } from './engine-run.js';

export const ALL_ENGINES = ['quarry', 'quarry+snippets', 'minisearch', 'flexsearch', 'lunr', 'orama', 'sqlite-fts5'];

export interface EngineSummary {
  engine: string;
  ok: boolean;
  error?: string;
  report?: RunReport;
  p50: number; p95: number; p99: number; mean: number;
  /** Percentiles of per-query CPU time: what a query costs when other processes share the cores. */
  cpuP50: number; cpuP95: number;
  meanTotal: number;
  ndcg10?: number;
}

/** Runs each engine in a child process; a failing engine is reported, not fatal. */
export function runEngines(corpusPath: string, queries: { id: string; q: string }[], judged: string[], engines: string[],
  options: { maxOldSpaceMb?: number; log?: (line: string) => void } = {}): EngineSummary[] {
  const log = options.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const work = mkdtempSync(join(tmpdir(), 'quarry-bench-run-'));
  const queriesPath = join(work, 'queries.json');
  writeFileSync(queriesPath, JSON.stringify({ queries, judged }));
  const out: EngineSummary[] = [];
  try {
    for (const engine of engines) {
      const reportPath = join(work, `${engine}.json`);
      log(`bench: ${engine} …`);
      const child = spawnSync(process.execPath, [
        `--max-old-space-size=${options.maxOldSpaceMb ?? 8192}`, '--import', 'tsx',
        join(REPO_ROOT, 'bench', 'engine-run.ts'), engine, corpusPath, queriesPath, reportPath,
      ], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8', maxBuffer: 64 * MB });
      if (child.status !== 0) {
        const error = (child.stderr ?? '').trim().split('\n').slice(-6).join('\n') || `exit ${child.status ?? child.signal}`;
        log(`bench: ${engine} failed:\n${error}`);
        out.push({ engine, ok: false, error, p50: NaN, p95: NaN, p99: NaN, mean: NaN, cpuP50: NaN, cpuP95: NaN, meanTotal: NaN });
        continue;
      }
      const report = JSON.parse(readFileSync(reportPath, 'utf8')) as RunReport;
      const sorted = [...report.latenciesMs].sort((a, b) => a - b);
      const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
      const meanTotal = report.totals.reduce((a, b) => a + b, 0) / Math.max(1, report.totals.length);
      const cpu = [...report.cpuMs].sort((a, b) => a - b);
      out.push({
        engine, ok: true, report, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean,
        cpuP50: percentile(cpu, 50), cpuP95: percentile(cpu, 95), meanTotal,
      });
      log(`bench: ${engine}: build ${fmt(report.buildMs / 1000)} s (CPU ${fmt(report.buildCpuMs / 1000)} s), p50 ${fmt(percentile(sorted, 50), 3)} ms`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}

/** nDCG@10 of each engine's top 10 over the judged queries (a by-product: same queries, same scorer). */
export function scoreRelevance(summaries: EngineSummary[], qrels: Qrels): void {
  if (qrels.size === 0) return;
  for (const s of summaries) {
    if (!s.report) continue;
    let sum = 0;
    for (const [qid, judged] of qrels) sum += ndcgAt(10, s.report.top10[qid] ?? [], judged);
    s.ndcg10 = sum / qrels.size;
  }
}

/** Markdown tables: the figures, then Quarry's ratio to each peer (peer ÷ Quarry: > 1 means Quarry is better). */
export function formatTables(summaries: EngineSummary[], reference = 'quarry'): string {
  const lines: string[] = [];
  const withNdcg = summaries.some((s) => s.ndcg10 !== undefined);
  lines.push(`| engine | build s (CPU s) | MB/s of CPU | index MB | index/text | peak RSS MB | RSS after load MB | p50 ms | p95 ms | p99 ms | mean ms | CPU p50 / p95 ms | mean total |${withNdcg ? ' nDCG@10 |' : ''}`);
  lines.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|${withNdcg ? '---:|' : ''}`);
  for (const s of summaries) {
    if (!s.report) {
      lines.push(`| ${s.engine} | failed: ${s.error?.split('\n').pop()?.replace(/\|/g, '/') ?? ''} |`);
      continue;
    }
    const r = s.report;
    lines.push(`| ${s.engine} | ${fmt(r.buildMs / 1000)} (${fmt(r.buildCpuMs / 1000)}) | ${fmt(r.textBytes / 1e6 / (r.buildCpuMs / 1000), 1)} | ${fmt(r.indexBytes / MB, 1)} | ${fmt((100 * r.indexBytes) / r.textBytes, 0)}% | ${fmt(r.peakRss / MB, 0)} | ${fmt(r.rssAfterLoad / MB, 0)} | ${fmt(s.p50, 3)} | ${fmt(s.p95, 3)} | ${fmt(s.p99, 3)} | ${fmt(s.mean, 3)} | ${fmt(s.cpuP50, 2)} / ${fmt(s.cpuP95, 2)} | ${fmt(s.meanTotal, 0)} |${withNdcg ? ` ${fmt(s.ndcg10 ?? NaN, 4)} |` : ''}`);
  }
  const q = summaries.find((s) => s.engine === reference && s.report);
  if (q) {
    lines.push('');
    lines.push(`Ratios, peer ÷ ${reference} (above 1: ${reference} is faster / smaller):`);
    lines.push('');
    lines.push('| peer | p50 | p95 | p99 | CPU p50 | build time | build CPU | index bytes | peak RSS |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of summaries) {
      if (s === q || !s.report || s.engine.startsWith(`${reference}+`)) continue;
      lines.push(`| ${s.engine} | ${fmt(s.p50 / q.p50, 1)}× | ${fmt(s.p95 / q.p95, 1)}× | ${fmt(s.p99 / q.p99, 1)}× | ${fmt(s.cpuP50 / q.cpuP50, 1)}× | ${fmt(s.report.buildMs / q.report!.buildMs, 2)}× | ${fmt(s.report.buildCpuMs / q.report!.buildCpuMs, 2)}× | ${fmt(s.report.indexBytes / q.report!.indexBytes, 2)}× | ${fmt(s.report.peakRss / q.report!.peakRss, 2)}× |`);
    }
  }
  return lines.join('\n');
}
