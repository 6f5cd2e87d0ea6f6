/**
 * `node --import tsx bench/dictionary.ts [corpus.jsonl | BEIR dir] [--segments 8]`: the cost of the
 * surface dictionary (src/engine/spell) on a real vocabulary — by default the Debian-docs corpus
 * (bench/debian-docs.ts), about a million distinct surface forms.
 *
 * The corpus is split into `segments` document ranges, each range's (form, df) list sorted as a
 * SegmentReader yields it; then it measures `SurfaceDictionary.merge` (what a searcher pays once per
 * snapshot, on first suggest or did-you-mean), `complete` on 1,000 prefixes of 1–4 characters,
 * `correct` on 1,000 misspellings (one random edit, two for words of 9+ letters; seed 7), and
 * `SurfaceDictionary.update` (what the next snapshot pays instead of a merge) after a small commit and
 * after a merge of two segments, each with the correction carried over and one correction after it.
 */
import { analyzeSurfaces } from '../src/engine/analysis/analyzer.js';
import { Correction } from '../src/engine/spell/index.js';
import { Completion } from '../src/engine/suggest/index.js';
import { SurfaceDictionary } from '../src/engine/surface/index.js';
import { loadCollection } from './dataset.js';
import { debianDocsCorpus } from './debian-docs.js';
import { fmt, MB, percentile, seededRandom } from './measure.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** Wall and CPU time of `f` on each input, after a warm-up pass (the dictionary caches nothing). */
function timeEach<T>(inputs: T[], f: (x: T) => unknown): { p50: number; p99: number; mean: number; cpuP50: number; cpuMean: number } {
  for (const x of inputs) f(x); // warm-up
  const ms: number[] = [];
  const cpu: number[] = [];
  for (const x of inputs) {
    const c = process.cpuUsage();
    const t = process.hrtime.bigint();
    f(x);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    const u = process.cpuUsage(c);
    cpu.push((u.user + u.system) / 1000);
  }
  ms.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), mean: mean(ms), cpuP50: percentile(cpu, 50), cpuMean: mean(cpu) };
}

async function main(): Promise<void> {
  const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(i > 0 && all[i - 1]!.startsWith('--')));
  const path = positional[0] ?? (await debianDocsCorpus()).path;
  const segments = Number(arg('segments') ?? 8);
  const { docs, name } = await loadCollection(path);
  const t0 = performance.now();
  const sources: [string, number][][] = [];
  const per = Math.ceil(docs.length / segments);
  for (let s = 0; s < segments; s++) {
    const dfs = new Map<string, number>();
    for (const d of docs.slice(s * per, (s + 1) * per)) {
      for (const form of new Set([...analyzeSurfaces(d.title), ...analyzeSurfaces(d.text)])) dfs.set(form, (dfs.get(form) ?? 0) + 1);
    }
    sources.push([...dfs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }
  const entries = sources.reduce((n, s) => n + s.length, 0);
  console.log(`# dictionary: ${name}, ${docs.length} documents in ${segments} segments, ${entries} (form, df) entries; analyzed in ${fmt((performance.now() - t0) / 1000, 1)} s`);

  global.gc?.();
  const { heapUsed: heap0, arrayBuffers: buffers0 } = process.memoryUsage();
  const merges: number[] = [];
  const mergesCpu: number[] = [];
  let dict = SurfaceDictionary.empty();
  for (let r = 0; r < 3; r++) {
    const c = process.cpuUsage();
    const t = performance.now();
    dict = SurfaceDictionary.merge(sources);
    merges.push(performance.now() - t);
    const u = process.cpuUsage(c);
    mergesCpu.push((u.user + u.system) / 1000);
  }
  mergesCpu.sort((a, b) => a - b);
  const tTree = performance.now();
  const completion = new Completion(dict);
  completion.complete('a', 10); // builds the range-argmax tree (lazily, on the first long range)
  const treeMs = performance.now() - tTree;
  global.gc?.();
  const heapDelta = process.memoryUsage().heapUsed - heap0;
  const buffersDelta = process.memoryUsage().arrayBuffers - buffers0;
  merges.sort((a, b) => a - b);

  const random = seededRandom(7);
  const forms = sources.flat().map(([f]) => f);
  const pick = () => forms[Math.floor(random() * forms.length)]!;
  const prefixes = Array.from({ length: 1000 }, () => { const f = pick(); return f.slice(0, 1 + Math.floor(random() * Math.min(4, f.length))); });
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const typo = (w: string) => {
    const i = Math.floor(random() * w.length);
    const c = letters[Math.floor(random() * 26)]!;
    switch (Math.floor(random() * 4)) {
      case 0: return w.slice(0, i) + w.slice(i + 1);
      case 1: return w.slice(0, i) + c + w.slice(i);
      case 2: return w.slice(0, i) + c + w.slice(i + 1);
      default: return i + 1 < w.length ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : w.slice(0, i) + c;
    }
  };
  const words: string[] = [];
  while (words.length < 1000) {
    const f = pick();
    if (f.length < 4 || !/^[a-z]+$/.test(f) || dict.df(f) < 20) continue;
    words.push(f.length >= 9 ? typo(typo(f)) : typo(f));
  }
  const complete = timeEach(prefixes, (p) => completion.complete(p, 10));
  const tRev = performance.now();
  const cRev = process.cpuUsage();
  const correction = new Correction(dict);
  correction.correct('abcdefghijkl', docs.length); // builds the reversed forms (lazily, on the first correction)
  const reversedMs = performance.now() - tRev;
  const uRev = process.cpuUsage(cRev);
  const reversedCpuMs = (uRev.user + uRev.system) / 1000;
  const short = words.filter((w) => w.length < 9);
  const long = words.filter((w) => w.length >= 9);
  const correct = timeEach(words, (w) => correction.correct(w, docs.length));
  const correctShort = timeEach(short, (w) => correction.correct(w, docs.length));
  const correctLong = timeEach(long, (w) => correction.correct(w, docs.length));
  const corrected = words.filter((w) => correction.correct(w, docs.length) !== undefined).length;

  // what a later snapshot pays instead of a merge (src/engine/query/searcher.ts updates the previous
  // commit's dictionary): a commit of 50 documents as one new segment, and a merge of two segments into one
  const byForm = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const sourceOf = (range: typeof docs) => {
    const dfs = new Map<string, number>();
    for (const d of range) for (const form of new Set([...analyzeSurfaces(d.title), ...analyzeSurfaces(d.text)])) dfs.set(form, (dfs.get(form) ?? 0) + 1);
    return [...dfs].sort(byForm);
  };
  const commit = sourceOf(docs.slice(-50));
  const sum = new Map<string, number>();
  for (const source of sources.slice(0, 2)) for (const [f, df] of source) sum.set(f, (sum.get(f) ?? 0) + df);
  const mergedSource = [...sum].sort(byForm);
  const median3 = (f: () => void) => {
    const cpu: number[] = [];
    for (let r = 0; r < 3; r++) {
      const c = process.cpuUsage();
      f();
      const u = process.cpuUsage(c);
      cpu.push((u.user + u.system) / 1000);
    }
    return cpu.sort((a, b) => a - b)[1]!;
  };
  // the update with the correction's structures carried over, as the searcher does it, and the first
  // correction after it (which pays for whatever the carry-over left to build)
  const update = (removed: typeof sources, added: typeof sources) => {
    Correction.after(correction, SurfaceDictionary.update(dict, removed, added)).correct(long[0] ?? 'misspeling', docs.length);
  };
  const updateCommitMs = median3(() => update([], [commit]));
  const updateMergeMs = median3(() => update(sources.slice(0, 2), [mergedSource]));

  console.log('');
  console.log('| measure | value |');
  console.log('|---|---:|');
  console.log(`| distinct forms | ${dict.size} |`);
  console.log(`| merge of ${segments} sources (median of 3): wall; CPU | ${fmt(merges[1]!, 0)} ms; ${fmt(mergesCpu[1]!, 0)} ms |`);
  console.log(`| range-argmax tree (first completion) | ${fmt(treeMs, 0)} ms |`);
  console.log(`| held by the dictionary: JavaScript heap; typed arrays (the packed forms, dfs, tree) | ${fmt(heapDelta / MB, 0)} MiB; ${fmt(buffersDelta / MB, 1)} MiB |`);
  console.log(`| complete(prefix of 1–4 chars, 10): wall p50 / p99; CPU p50 | ${fmt(complete.p50, 4)} / ${fmt(complete.p99, 4)} ms; ${fmt(complete.cpuP50, 4)} ms |`);
  console.log(`| packed and reversed forms (first correction): wall; CPU | ${fmt(reversedMs, 0)} ms; ${fmt(reversedCpuMs, 0)} ms |`);
  console.log(`| correct(misspelling), all ${words.length}: wall p50 / p99 / mean; CPU p50 / mean | ${fmt(correct.p50, 3)} / ${fmt(correct.p99, 3)} / ${fmt(correct.mean, 3)} ms; ${fmt(correct.cpuP50, 3)} / ${fmt(correct.cpuMean, 3)} ms |`);
  console.log(`| … words of 4–8 letters (${short.length}, one edit) | ${fmt(correctShort.p50, 3)} / ${fmt(correctShort.p99, 3)} / ${fmt(correctShort.mean, 3)} ms; ${fmt(correctShort.cpuP50, 3)} / ${fmt(correctShort.cpuMean, 3)} ms |`);
  console.log(`| … words of 9+ letters (${long.length}, two edits) | ${fmt(correctLong.p50, 3)} / ${fmt(correctLong.p99, 3)} / ${fmt(correctLong.mean, 3)} ms; ${fmt(correctLong.cpuP50, 3)} / ${fmt(correctLong.cpuMean, 3)} ms |`);
  console.log(`| misspellings given a correction | ${corrected} of ${words.length} |`);
  console.log(`| update after a commit of 50 documents (a new segment), then one correction: CPU, median of 3 | ${fmt(updateCommitMs, 0)} ms |`);
  console.log(`| update after a merge of 2 segments into 1, then one correction: CPU, median of 3 | ${fmt(updateMergeMs, 0)} ms |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
