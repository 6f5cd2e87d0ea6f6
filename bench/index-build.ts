/**
 * Index-build micro-benchmark (storage): throughput of analysis alone, of a full build (analysis,
 * inversion, encoding, stored-field compression, fsync), the size of each file kind against the text,
 * and postings decode speed. Corpus: a JSONL file (`{title, text}` per line; default SciFact beside the
 * repository) repeated `--repeat` times with fresh cids, or a synthetic Zipf corpus when none exists.
 *
 *   node --import tsx bench/index-build.ts [--corpus path.jsonl] [--repeat 4] [--quality 5] [--block 32768]
 *     [--cache bytes]   (storedCacheBytes of the index read back: 0 makes every text fetch cold)
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenize } from '../src/engine/analysis/analyzer.js';
import { Index, NO_MORE_DOCS, type SegmentView } from '../src/engine/index/index.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

interface Doc { title: string; text: string }

function loadCorpus(): { name: string; docs: Doc[] } {
  const dflt = resolve(fileURLToPath(new URL('..', import.meta.url)), '..', 'shared', 'data', 'scifact', 'corpus.jsonl');
  const path = arg('corpus', dflt);
  if (existsSync(path)) {
    const docs = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => {
      const o = JSON.parse(l) as { title?: string; text?: string };
      return { title: o.title ?? '', text: o.text ?? '' };
    });
    return { name: path, docs };
  }
  // synthetic: Zipf-distributed words of a 30k vocabulary, 200-word docs
  let seed = 1;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const vocab = Array.from({ length: 30000 }, (_, i) => i.toString(36) + 'x');
  const docs: Doc[] = [];
  for (let d = 0; d < 5000; d++) {
    const words: string[] = [];
    for (let i = 0; i < 200; i++) words.push(vocab[Math.floor(Math.pow(rand(), 3) * vocab.length)]!);
    docs.push({ title: words.slice(0, 6).join(' '), text: words.join(' ') });
  }
  return { name: 'synthetic', docs };
}

const { name, docs: base } = loadCorpus();
const repeat = Number(arg('repeat', '4'));
const docs: Doc[] = [];
for (let r = 0; r < repeat; r++) docs.push(...base);
const textBytes = docs.reduce((n, d) => n + Buffer.byteLength(d.title) + Buffer.byteLength(d.text), 0);
const MB = 1024 * 1024;
console.log(`corpus ${name} ×${repeat}: ${docs.length} docs, ${(textBytes / MB).toFixed(1)} MB of text`);

/** CPU seconds since `c0` (user + system): the machine is shared, wall time is not ours alone. */
const cpu = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
};
let c0 = process.cpuUsage();
let t0 = performance.now();
let tokens = 0;
for (const d of docs) {
  tokens += tokenize(d.title, () => {}, 0);
  tokens += tokenize(d.text, () => {}, 0);
}
let ms = performance.now() - t0;
console.log(`analysis only:   ${(textBytes / MB / cpu(c0)).toFixed(1)} MB/s of CPU time, ${(textBytes / MB / (ms / 1000)).toFixed(1)} MB/s wall (${tokens} tokens)`);

const dir = mkdtempSync(join(tmpdir(), 'quarry-index-build-'));
try {
  const tuning: { storedQuality?: number; storedBlockBytes?: number; maxBufferedBytes?: number; storedCacheBytes?: number } = {};
  if (process.argv.includes('--cache')) tuning.storedCacheBytes = Number(arg('cache', '0'));
  if (process.argv.includes('--quality')) tuning.storedQuality = Number(arg('quality', '5'));
  if (process.argv.includes('--block')) tuning.storedBlockBytes = Number(arg('block', '65536'));
  if (process.argv.includes('--buffer')) tuning.maxBufferedBytes = Number(arg('buffer', '0')) * MB;
  const index = await Index.open(dir, tuning);
  const w = await index.openWriter();
  c0 = process.cpuUsage();
  t0 = performance.now();
  for (let i = 0; i < docs.length; i++) w.upsert({ cid: BigInt(i + 1), title: docs[i]!.title, text: docs[i]!.text });
  const tUpsert = performance.now() - t0;
  const info = await w.commit();
  ms = performance.now() - t0;
  console.log(`full build:      ${(textBytes / MB / cpu(c0)).toFixed(1)} MB/s of CPU time, ${(textBytes / MB / (ms / 1000)).toFixed(1)} MB/s wall (${ms.toFixed(0)} ms: upserts ${tUpsert.toFixed(0)} ms, commit ${(ms - tUpsert).toFixed(0)} ms; ${info.segments} segments)`);
  await w.close();
  const sizes = new Map<string, number>();
  for (const f of readdirSync(dir)) {
    const kind = f.replace(/^seg_\d+/, 'seg').replace(/_\d+$/, '');
    sizes.set(kind, (sizes.get(kind) ?? 0) + statSync(join(dir, f)).size);
  }
  let total = 0;
  for (const [k, v] of [...sizes].sort()) {
    total += v;
    console.log(`  ${k.padEnd(12)} ${(v / MB).toFixed(2).padStart(8)} MB  ${((100 * v) / textBytes).toFixed(1).padStart(5)}% of text`);
  }
  console.log(`index size:      ${(total / MB).toFixed(2)} MB = ${((100 * total) / textBytes).toFixed(1)}% of text`);

  // decode: every postings list of the first segment, docs+freqs, then with positions
  const segs = index.snapshot().segments as SegmentView[];
  for (const withPositions of [false, true]) {
    let postings = 0;
    c0 = process.cpuUsage();
    for (const seg of segs) {
      for (const term of seg.terms()) {
        const c = seg.postings(term, { positions: withPositions })!;
        for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
          postings++;
          if (withPositions) c.positions();
          else c.freq();
        }
      }
    }
    const s = cpu(c0);
    console.log(`decode${withPositions ? ' +positions' : '           '}: ${(postings / s / 1e6).toFixed(1)} M postings/s of CPU time (${postings} postings, every term's cursor opened)`);
  }
  c0 = process.cpuUsage();
  for (let k = 0; k < 2000; k++) {
    const seg = segs[k % segs.length]!;
    void seg.stored((k * 7919) % seg.maxDoc).text;
  }
  console.log(`stored fetch:    ${((cpu(c0) / 2000) * 1e6).toFixed(0)} µs of CPU per random document`);
  t0 = performance.now();
  const reopened = await Index.open(dir);
  console.log(`open:            ${(performance.now() - t0).toFixed(0)} ms`);
  await reopened.close();
  await index.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
