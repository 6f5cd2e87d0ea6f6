/**
 * The scale benchmark (`npm run bench:corpus -- <corpus.jsonl> [--docs N] [--peers fts5] [--queries N]
 * [--commit-every N]`): Quarry built from a Wikipedia-style JSONL (`{_id, title, text}` per line) streamed
 * from disk — never held in memory, so the build's peak RSS is the writer's — then served by a fresh
 * process that only opens the index, as a server would. The build ends in one commit that merges
 * into one segment (`forceMerge(1)`: the bulk load the peers do too, Lucene's forceMerge(1), Xapian's compaction), or
 * commits every N documents with `--commit-every N`, as `quarry import` does (every 2,000 by default),
 * so that its policy's merges run during the build. `--docs N` beyond the file's length grows
 * it by perturbed passes (bench/synth-corpus.ts `perturbedDocs`); `--synthetic N` uses the synthetic
 * Wikipedia-like generator instead of a file. Documents other than a whole file are written to a JSONL
 * file before any build, so that every engine reads and parses the same lines and none pays for making
 * them. Every phase runs in its own child process so each memory figure is its own.
 *
 * Reported: build wall/CPU time and MB/s of text, peak RSS of the build, index bytes per structure
 * (the `.idx` sections: lengths = norms, cids, postings with their skip tables, positions, heads, term
 * and surface dictionary; the `.sto` stored text), the serving process's RSS after GC with the index
 * open (and per million documents), and p50/p95/p99 of top-20 searches with the exact total, snippets
 * off and on, for four query kinds: 1–3 corpus words (seeded, bench/queries.ts), titles, phrases of two
 * common words, and 300-word paragraphs. Optional peer: SQLite FTS5 (`--peers fts5`) on the same stream
 * and the same queries (plain OR; its phrases quoted) except the 300-word ones, which take it seconds
 * each (2.3 s p50 on 20,000 synthetic documents) and would make the run hours long. Optional peers where
 * installed: Lucene (`--peers lucene`, Debian's liblucene8-java) and Xapian (`--peers xapian`, python3-xapian),
 * fed the same stream on their standard input and the same queries, 300-word ones included
 * (bench/peers/external.ts); each query kind is timed with the peer's own estimated total and with an
 * exact one. `--keep <dir>` keeps the indexes and the queries (`queries.json`) in `dir`, for
 * bench/per-query.ts (the same queries, query by query) and bench/query-ab.ts.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommitInfo } from '../src/engine/index.js';
import { manifestFiles, readManifest } from '../src/engine/index/manifest.js';
import { REPO_ROOT, plainQuery } from './dataset.js';
import { fmt, memory, MB, percentile } from './measure.js';
import { seededQueries } from './queries.js';
import { perturbedDocs, synthDocs, type SynthDoc } from './synth-corpus.js';
import { buildPeer, EXTERNAL_PEERS, servePeer, type ExternalPeer, type PeerServe } from './peers/external.js';

/** A file (all of it, or `docs` documents: fewer, or more by perturbed passes), or `synthetic` generated documents. */
interface Source { path?: string; docs?: number; synthetic?: number }

function docsOf(source: Source): AsyncIterable<SynthDoc> | Iterable<SynthDoc> {
  return source.path ? perturbedDocs(source.path, source.docs) : synthDocs(source.synthetic ?? 0);
}

/**
 * The source as a whole JSONL file that every engine reads: a part of a file, its perturbed passes or
 * synthetic documents are written to `file` first, untimed. Generating them in a build's process would
 * charge the generator (~73 s of CPU for the 708k perturbed documents of a 1M run) to the engine whose
 * process makes them: Quarry's adding thread, where a peer's were made by another process beside it.
 */
async function materialize(source: Source, file: string): Promise<Source> {
  if (source.path !== undefined && source.docs === undefined) return source;
  const fd = openSync(file, 'w');
  try {
    let chunk = '';
    for await (const d of docsOf(source)) {
      chunk += `${JSON.stringify({ _id: d._id, title: d.title, text: d.text })}\n`;
      if (chunk.length >= 1 << 22) { writeSync(fd, chunk); chunk = ''; }
    }
    writeSync(fd, chunk);
    // on disk before any engine is timed: the kernel's writeback of GBs of new pages would otherwise
    // overlap the first engine's build, and every fsync of its files wait behind it
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { path: file };
}

interface Query { kind: string; q: string }
const PARAGRAPHS = '300 words';
/** A kind's timed pass; `cpu` is empty when only wall time was measured. */
interface Timing { kind: string; snippets: boolean; ms: number[]; cpu: number[]; totals: number[]; exactTotal?: boolean }

export interface BuildReport {
  engine: string; docs: number; textBytes: number; buildMs: number; buildCpuMs: number; peakRss: number;
  segments: number; files: Record<string, number>; sections: Record<string, number>;
  /** Of `buildMs`, a bulk load's one commit: its last flush and the merge into one segment (as the peers' forceMerge and compaction). */
  finalCommitMs?: number;
}
/** rssBase: the serving process before it opens the index (Node, tsx, the queries), so that per-document figures leave it out. */
/** live*: bytes the process holds after GC (V8 heap in use + external memory such as Buffers), which,
 *  unlike RSS, does not count memory freed but not yet returned to the system. */
export interface ServeReport { engine: string; openMs: number; rssBase: number; rssOpen: number; rssAfter: number; liveBase?: number; liveOpen?: number; liveAfter?: number; timings: Timing[] }

const live = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.external; };

const cpuMs = (c0: NodeJS.CpuUsage) => { const c = process.cpuUsage(c0); return (c.user + c.system) / 1000; };

/** The `.idx` sections of a segment file, from its meta JSON (docs/index-format.md): name → bytes. */
function idxSections(file: string): Record<string, number> {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    const tail = Buffer.alloc(4);
    readSync(fd, tail, 0, 4, size - 12 - 4);
    const metaLen = tail.readUInt32LE(0);
    const meta = Buffer.alloc(metaLen);
    readSync(fd, meta, 0, metaLen, size - 16 - metaLen);
    const m = JSON.parse(meta.toString('utf8')) as { sections: Record<string, [number, number]> };
    const out: Record<string, number> = {};
    for (const [name, [, bytes]] of Object.entries(m.sections)) out[name] = bytes;
    return out;
  } finally {
    closeSync(fd);
  }
}

async function buildQuarry(source: Source, dir: string, commitEvery?: number): Promise<BuildReport> {
  const { Index } = await import('../src/engine/index.js');
  const index = await Index.open(dir);
  const w = await index.openWriter();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let docs = 0;
  let textBytes = 0;
  for await (const d of docsOf(source)) {
    textBytes += Buffer.byteLength(d.title) + Buffer.byteLength(d.text);
    w.upsert({ cid: BigInt(++docs), title: d.title, text: d.text });
    if (commitEvery !== undefined && docs % commitEvery === 0) await w.commit();
  }
  let info: CommitInfo;
  let finalCommitMs: number | undefined;
  if (commitEvery === undefined) {
    // a bulk load ends in one segment, as Lucene's forceMerge(1) and Xapian's compaction do: one commit
    // that flushes the last buffer and merges every segment into one (a `commit()` before it would also
    // run the merge policy, which merged most of the corpus once more before the forced merge)
    const m0 = performance.now();
    info = await w.forceMerge(1);
    finalCommitMs = performance.now() - m0;
  } else {
    info = await w.commit();
  }
  await w.close();
  const buildMs = performance.now() - t0;
  const buildCpuMs = cpuMs(c0);
  await index.close();
  const files: Record<string, number> = {};
  const sections: Record<string, number> = {};
  // the current commit's files: those of the commit before it stay until the next writer opens
  for (const f of manifestFiles(readManifest(dir)!)) {
    const kind = f.replace(/^seg_\d+/, 'seg').replace(/_\d+$/, '');
    files[kind] = (files[kind] ?? 0) + statSync(join(dir, f)).size;
    if (f.endsWith('.idx')) for (const [k, v] of Object.entries(idxSections(join(dir, f)))) sections[k] = (sections[k] ?? 0) + v;
  }
  return { engine: 'quarry', docs, textBytes, buildMs, buildCpuMs, peakRss: memory().peak, segments: info.segments, files, sections, ...(finalCommitMs === undefined ? {} : { finalCommitMs }) };
}

/** Every engine runs every query once, untimed, before the timed passes: compiled code (V8's, the JVM's) and caches warm, as on a server that has been up a while. */
function warmUp(queries: readonly Query[], search: (q: Query) => unknown): void {
  for (const q of queries) search(q);
}

function time(kind: string, snippets: boolean, queries: Query[], search: (q: string) => number): Timing {
  const t: Timing = { kind, snippets, ms: [], cpu: [], totals: [] };
  for (const { q } of queries) {
    const c0 = process.cpuUsage();
    const s = performance.now();
    t.totals.push(search(q));
    t.ms.push(performance.now() - s);
    t.cpu.push(cpuMs(c0));
  }
  return t;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();

async function serveQuarry(dir: string, queries: Query[]): Promise<ServeReport> {
  const { Index } = await import('../src/engine/index.js');
  gc();
  const rssBase = memory().rss;
  const liveBase = live();
  const t0 = performance.now();
  const index = await Index.open(dir);
  const searcher = index.searcher();
  const openMs = performance.now() - t0;
  gc();
  const rssOpen = memory().rss;
  const liveOpen = live();
  warmUp(queries, ({ q }) => searcher.search(q, { snippets: false }));
  const timings: Timing[] = [];
  for (const snippets of [false, true]) {
    for (const kind of [...new Set(queries.map((q) => q.kind))]) {
      timings.push(time(kind, snippets, queries.filter((q) => q.kind === kind), (q) => searcher.search(q, { snippets }).total));
    }
  }
  gc();
  const rssAfter = memory().rss;
  const liveAfter = live();
  await index.close();
  return { engine: 'quarry', openMs, rssBase, rssOpen, rssAfter, liveBase, liveOpen, liveAfter, timings };
}

/** FTS5's query text: words OR'ed, each quoted; a phrase query stays one quoted phrase. */
function fts5Query(q: Query): string {
  const words = q.q.split(/\s+/).filter((w) => w !== '').map((w) => w.replace(/"/g, ''));
  return q.kind === 'phrase' ? `"${words.join(' ')}"` : words.map((w) => `"${w}"`).join(' OR ');
}

async function buildFts5(source: Source, file: string): Promise<BuildReport> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')");
  const ins = db.prepare('INSERT INTO docs(rowid, body) VALUES (?, ?)');
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let docs = 0;
  let textBytes = 0;
  db.exec('BEGIN');
  for await (const d of docsOf(source)) {
    textBytes += Buffer.byteLength(d.title) + Buffer.byteLength(d.text);
    ins.run(++docs, d.title === '' ? d.text : `${d.title}\n${d.text}`);
  }
  db.exec('COMMIT');
  db.exec("INSERT INTO docs(docs) VALUES ('optimize')");
  db.close();
  return {
    engine: 'sqlite-fts5', docs, textBytes, buildMs: performance.now() - t0, buildCpuMs: cpuMs(c0), peakRss: memory().peak,
    segments: 1, files: { 'fts.db': statSync(file).size }, sections: {},
  };
}

async function serveFts5(file: string, queries: Query[]): Promise<ServeReport> {
  const { default: Database } = await import('better-sqlite3');
  gc();
  const rssBase = memory().rss;
  const t0 = performance.now();
  const db = new Database(file, { readonly: true });
  const stmt = db.prepare('SELECT rowid AS id, count(*) OVER () AS total FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 20');
  const openMs = performance.now() - t0;
  gc();
  const rssOpen = memory().rss;
  const timed = queries.filter((q) => q.kind !== PARAGRAPHS);
  warmUp(timed, (q) => stmt.all(fts5Query(q)));
  const timings: Timing[] = [];
  for (const kind of [...new Set(timed.map((q) => q.kind))]) {
    timings.push(time(kind, false, queries.filter((q) => q.kind === kind), (q) => {
      const rows = stmt.all(fts5Query({ kind, q })) as { total: number }[];
      return rows.length === 0 ? 0 : rows[0]!.total;
    }));
  }
  gc();
  const rssAfter = memory().rss;
  db.close();
  return { engine: 'sqlite-fts5', openMs, rssBase, rssOpen, rssAfter, timings };
}

async function buildExternal(peer: ExternalPeer, source: Source, work: string, dir: string): Promise<BuildReport> {
  const r = await buildPeer(peer, work, dir, docsOf(source));
  return {
    engine: peer.name, docs: r.docs, textBytes: r.textBytes, buildMs: r.buildMs, buildCpuMs: r.buildCpuMs, peakRss: r.peakRss,
    segments: r.segments, files: { index: r.bytes }, sections: {},
  };
}

/**
 * A peer's serving report; its query kinds timed with exact totals come out as a second engine row,
 * "<name> exact", and the search alone of its default collector's pass (when the peer times it apart) as
 * a third, "<name> search only": without the query's parse and the reading of its hits, both of which
 * Quarry's figures include.
 */
function serveExternal(peer: ExternalPeer, r: PeerServe): ServeReport[] {
  const report = (exact: boolean): ServeReport => ({
    engine: exact ? `${peer.name} exact` : peer.name, openMs: r.openMs, rssBase: r.rssBase, rssOpen: r.rssOpen, rssAfter: r.rssAfter,
    timings: r.timings.filter((t) => t.exactTotal === exact).map(({ searchMs: _, ...t }) => ({ ...t, snippets: false })),
  });
  const reports = [report(false), report(true)];
  const searchOnly = r.timings.filter((t) => !t.exactTotal && t.searchMs !== undefined);
  if (searchOnly.length > 0) {
    reports.push({
      ...reports[0]!, engine: `${peer.name} search only`,
      timings: searchOnly.map(({ searchMs, ...t }) => ({ ...t, ms: searchMs!, cpu: [], snippets: false })),
    });
  }
  return reports;
}

/** Queries drawn from the first 20,000 documents of the stream (seeded, the same for every engine). */
export async function makeQueries(source: Source, count: number): Promise<Query[]> {
  const sample: { id: string; title: string; text: string }[] = [];
  const first = (n: number | undefined) => Math.min(n ?? Infinity, 20_000);
  for await (const d of docsOf(source.path ? { path: source.path, docs: first(source.docs) } : { synthetic: first(source.synthetic) })) {
    sample.push({ id: d._id, title: d.title, text: d.text });
  }
  const words = seededQueries(sample, Math.round(count * 0.8), 42).map((q) => ({ kind: '1–3 words', q: q.q }));
  const titles: Query[] = [];
  for (let i = 0; titles.length < Math.round(count * 0.2) && i < sample.length * 4; i++) {
    const t = plainQuery(sample[(i * 7919) % sample.length]!.title);
    if (t !== '') titles.push({ kind: 'titles', q: t });
  }
  const phrases = ['of the', 'in the', 'to the', 'and the', 'on the', 'for the', 'at the', 'from the', 'with the', 'of a']
    .map((p) => ({ kind: 'phrase', q: `"${p}"` }));
  const paragraphs: Query[] = [];
  for (let i = 0; paragraphs.length < 20 && i < sample.length; i += Math.floor(sample.length / 20) || 1) {
    let q = plainQuery(sample[i]!.text).split(' ').slice(0, 300).join(' ');
    while (Buffer.byteLength(q) > 4096) q = q.slice(0, q.lastIndexOf(' '));
    if (q !== '') paragraphs.push({ kind: PARAGRAPHS, q });
  }
  return [...words, ...titles, ...phrases, ...paragraphs];
}

/** Runs one phase in a child process (so its memory is its own) and returns its JSON report. */
function child<T>(phase: string, payload: object): T {
  const work = mkdtempSync(join(tmpdir(), 'quarry-scale-'));
  try {
    const inFile = join(work, 'in.json');
    const outFile = join(work, 'out.json');
    writeFileSync(inFile, JSON.stringify(payload));
    const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', join(REPO_ROOT, 'bench', 'scale.ts'), phase, inFile, outFile],
      { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`scale: phase ${phase} failed (${r.status ?? r.signal})`);
    return JSON.parse(readFileSync(outFile, 'utf8')) as T;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function liveCells(s: ServeReport, docs: number): string {
  if (s.liveBase === undefined) return '— | —';
  const open = (s.liveOpen! - s.liveBase) / MB;
  const after = (s.liveAfter! - s.liveBase) / MB;
  return `${fmt(open, 0)} / ${fmt(after, 0)} | ${fmt(open / (docs / 1e6), 0)} / ${fmt(after / (docs / 1e6), 0)}`;
}

/** Bytes of an engine's index without its stored text (Quarry's `.sto` files; the peers store none). */
const indexBytes = (b: BuildReport) => Object.entries(b.files).filter(([k]) => !k.endsWith('.sto')).reduce((a, [, x]) => a + x, 0);

/** Quarry against each peer on the issue's figures: peer ÷ Quarry, so above 1 is Quarry ahead. */
function versus(builds: BuildReport[], serves: ServeReport[]): string {
  const q = builds.find((b) => b.engine === 'quarry');
  const qs = serves.find((s) => s.engine === 'quarry');
  if (!q || !qs) return '';
  const pct = (s: ServeReport, kind: string, p: number) => {
    const t = s.timings.find((x) => x.kind === kind && !x.snippets);
    return t === undefined ? NaN : percentile([...t.ms].sort((a, b) => a - b), p);
  };
  const kinds = qs.timings.filter((t) => !t.snippets).map((t) => t.kind);
  const lines = ['| peer | build MB/s: peer / quarry | index MB without stored text: peer / quarry | peak build RSS MB: peer / quarry | ' +
    kinds.map((k) => `${k} p50 / p99 ms: peer vs quarry`).join(' | ') + ' |'];
  lines.push(`|---|---:|---:|---:|${kinds.map(() => '---:').join('|')}|`);
  for (const s of serves.filter((x) => x.engine !== 'quarry')) {
    const b = builds.find((x) => s.engine === x.engine || s.engine === `${x.engine} exact`);
    if (!b) continue;
    const rate = (x: BuildReport) => x.textBytes / 1e6 / (x.buildMs / 1000);
    lines.push(`| ${s.engine} | ${fmt(rate(b), 2)} / ${fmt(rate(q), 2)} | ${fmt(indexBytes(b) / MB, 1)} / ${fmt(indexBytes(q) / MB, 1)} | ${fmt(b.peakRss / MB, 0)} / ${fmt(q.peakRss / MB, 0)} | ` +
      kinds.map((k) => `${fmt(pct(s, k, 50), 2)} / ${fmt(pct(s, k, 99), 2)} vs ${fmt(pct(qs, k, 50), 2)} / ${fmt(pct(qs, k, 99), 2)}`).join(' | ') + ' |');
  }
  return lines.length > 2 ? lines.join('\n') : '';
}

function table(builds: BuildReport[], serves: ServeReport[]): string {
  const lines: string[] = [];
  lines.push('| engine | docs | text MB | build s (CPU s) | MB/s (wall) | peak build RSS MB | segments | index MB | serving RSS MB: base / open / after queries (after GC) | serving MB per 1M docs (after queries − base) | live MB above base: open / after queries | live MB per 1M docs: open / after queries |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const b of builds) {
    const s = serves.find((x) => x.engine === b.engine)!;
    const bytes = Object.values(b.files).reduce((a, x) => a + x, 0);
    lines.push(`| ${b.engine} | ${b.docs} | ${fmt(b.textBytes / 1e6, 1)} | ${fmt(b.buildMs / 1000, 1)} (${fmt(b.buildCpuMs / 1000, 1)}) | ${fmt(b.textBytes / 1e6 / (b.buildMs / 1000), 2)} | ${fmt(b.peakRss / MB, 0)} | ${b.segments} | ${fmt(bytes / MB, 1)} | ${fmt(s.rssBase / MB, 0)} / ${fmt(s.rssOpen / MB, 0)} / ${fmt(s.rssAfter / MB, 0)} | ${fmt((s.rssAfter - s.rssBase) / MB / (b.docs / 1e6), 0)} | ${liveCells(s, b.docs)} |`);
  }
  const q = builds.find((b) => b.engine === 'quarry');
  if (q) {
    lines.push('');
    lines.push('Quarry index bytes by structure:');
    lines.push('');
    lines.push('| structure | MB | % of text |');
    lines.push('|---|---:|---:|');
    const rows: [string, number][] = [...Object.entries(q.sections).map(([k, v]) => [`.idx ${k}`, v] as [string, number]),
      ...Object.entries(q.files).filter(([k]) => !k.endsWith('.idx')).map(([k, v]) => [k, v] as [string, number])];
    for (const [k, v] of rows) lines.push(`| ${k} | ${fmt(v / MB, 2)} | ${fmt((100 * v) / q.textBytes, 1)}% |`);
  }
  lines.push('');
  lines.push('| engine | queries | snippets | n | p50 ms | p95 ms | p99 ms | CPU p50 / p99 ms | mean total |');
  lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const s of serves) {
    for (const t of s.timings) {
      const ms = [...t.ms].sort((a, b) => a - b);
      const cpu = [...t.cpu].sort((a, b) => a - b);
      const meanTotal = t.totals.reduce((a, b) => a + b, 0) / Math.max(1, t.totals.length);
      lines.push(`| ${s.engine} | ${t.kind} | ${t.snippets ? 'on' : 'off'} | ${ms.length} | ${fmt(percentile(ms, 50), 2)} | ${fmt(percentile(ms, 95), 2)} | ${fmt(percentile(ms, 99), 2)} | ${cpu.length === 0 ? '–' : `${fmt(percentile(cpu, 50), 2)} / ${fmt(percentile(cpu, 99), 2)}`} | ${fmt(meanTotal, 0)} |`);
    }
  }
  return lines.join('\n');
}

export async function runScale(argv: string[]): Promise<void> {
  const arg = (name: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : undefined; };
  const path = argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
  const synthetic = arg('synthetic') === undefined ? undefined : Number(arg('synthetic'));
  if (!path && synthetic === undefined) throw new Error('usage: bench:corpus -- <corpus.jsonl> [--docs N] | --synthetic N; [--peers fts5,lucene,lucene-all,xapian] [--queries N] [--commit-every N] [--keep dir]');
  const docs = arg('docs') === undefined ? undefined : Number(arg('docs'));
  const asked: Source = path ? (docs === undefined ? { path } : { path, docs }) : { synthetic: synthetic! };
  const commitEvery = arg('commit-every') === undefined ? undefined : Number(arg('commit-every'));
  if (commitEvery !== undefined && !(Number.isSafeInteger(commitEvery) && commitEvery >= 1)) throw new Error('--commit-every takes a number of documents ≥ 1');
  const cadence = commitEvery === undefined ? 'one commit, merged into one segment' : `a commit every ${commitEvery} documents`;
  const peers = (arg('peers') ?? '').split(',').filter((p) => p !== '');
  const work = arg('keep') ?? mkdtempSync(join(tmpdir(), 'quarry-scale-index-'));
  mkdirSync(work, { recursive: true });
  const corpusFile = join(work, 'corpus.jsonl');
  const m0 = performance.now();
  const source = await materialize(asked, corpusFile);
  if (source !== asked) console.error(`scale: the documents written to ${corpusFile} in ${fmt((performance.now() - m0) / 1000, 1)} s (untimed; every engine reads them from there)`);
  const queries = await makeQueries(source, Number(arg('queries') ?? 1000));
  // a kept run keeps its queries too: bench/per-query.ts times them again on the kept indexes
  if (arg('keep') !== undefined) writeFileSync(join(work, 'queries.json'), JSON.stringify(queries));
  console.log(`# bench:corpus (scale): ${path ?? `synthetic ${synthetic}`}${docs !== undefined && path ? `, ${docs} docs` : ''}; ${queries.length} queries; ${cadence}; node ${process.version}, ${cpus()[0]?.model ?? '?'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
  try {
    const builds: BuildReport[] = [];
    const serves: ServeReport[] = [];
    const qdir = join(work, 'quarry');
    builds.push(child<BuildReport>('build-quarry', { source, dir: qdir, commitEvery }));
    const merged = builds[0]!.finalCommitMs === undefined ? '' : ` (of which ${fmt(builds[0]!.finalCommitMs / 1000, 1)} s in its one commit: the last flush and the merge into one segment)`;
    console.error(`scale: quarry built: ${builds[0]!.docs} docs in ${fmt(builds[0]!.buildMs / 1000, 1)} s${merged}, ${cadence}`);
    serves.push(child<ServeReport>('serve-quarry', { dir: qdir, queries }));
    if (peers.includes('fts5')) {
      const file = join(work, 'fts.db');
      builds.push(child<BuildReport>('build-fts5', { source, file }));
      console.error(`scale: fts5 built in ${fmt(builds.at(-1)!.buildMs / 1000, 1)} s`);
      serves.push(child<ServeReport>('serve-fts5', { file, queries }));
    }
    for (const peer of EXTERNAL_PEERS.filter((p) => peers.includes(p.name))) {
      const missing = peer.missing();
      if (missing !== undefined) {
        console.log(`# peer ${peer.name} skipped: ${missing}`);
        continue;
      }
      const dir = join(work, peer.name);
      builds.push(child<BuildReport>('build-peer', { peer: peer.name, source, work, dir }));
      console.error(`scale: ${peer.name} built in ${fmt(builds.at(-1)!.buildMs / 1000, 1)} s`);
      serves.push(...serveExternal(peer, await servePeer(peer, work, dir, queries)));
    }
    console.log('');
    console.log(table(builds, serves));
    const side = versus(builds, serves);
    if (side !== '') console.log(`\nSide by side (snippets off; Quarry's totals exact):\n\n${side}`);
    console.log('');
    console.log(`Sample queries: ${[...new Set(queries.map((q) => q.kind))].map((k) => JSON.stringify(queries.find((q) => q.kind === k)!.q.slice(0, 60))).join(', ')}`);
  } finally {
    rmSync(corpusFile, { force: true });
    if (arg('keep') === undefined) rmSync(work, { recursive: true, force: true });
  }
}

async function phase(name: string, inFile: string, outFile: string): Promise<void> {
  const p = JSON.parse(readFileSync(inFile, 'utf8')) as { source: Source; dir: string; file: string; queries: Query[]; peer: string; work: string; commitEvery?: number };
  let out: unknown;
  if (name === 'build-quarry') out = await buildQuarry(p.source, p.dir, p.commitEvery);
  else if (name === 'serve-quarry') out = await serveQuarry(p.dir, p.queries);
  else if (name === 'build-fts5') out = await buildFts5(p.source, p.file);
  else if (name === 'serve-fts5') out = await serveFts5(p.file, p.queries);
  else if (name === 'build-peer') out = await buildExternal(EXTERNAL_PEERS.find((x) => x.name === p.peer)!, p.source, p.work, p.dir);
  else throw new Error(`unknown phase ${name}`);
  writeFileSync(outFile, JSON.stringify(out));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]) && process.argv[2]?.match(/^(build|serve)-/)) {
  phase(process.argv[2], process.argv[3]!, process.argv[4]!).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
