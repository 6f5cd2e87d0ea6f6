/**
 * A synthetic Wikipedia-like corpus, for scale runs where the real extract is absent (and to grow a real
 * corpus to 1M/5M documents). Deterministic for a seed. What makes it realistic enough for speed and size:
 *
 * - **Zipfian vocabulary** (exponent 1) over 400,000 word types, sampled by the inverse CDF of the
 *   continuous 1/x law (O(1) per token): rank 1 is "the" at ~5.4% of tokens, as in English text. The
 *   first ranks are real English function and common words in their frequency order, so queries and the
 *   common-terms rule meet the words they meet on the web; the rest are pronounceable made-up words.
 * - **Bursty documents**: each document has 8–40 topic words (drawn from ranks ≥ 300) that make up ~20%
 *   of its tokens, so within-document term frequencies and the df/cf ratio look like real articles
 *   rather than a bag of independent draws.
 * - **Lengths** log-normal, median 300 words, σ = 0.9 (mean ≈ 450 words ≈ 2.8 KB, like the 292k-article
 *   extract: 816 MB / 292,138); titles of 1–4 topic words; 1% of articles are a title only.
 *
 * `perturbedDocs` grows a real JSONL corpus instead: it cycles through the file, and every pass after
 * the first replaces 10% of the words with Zipf-drawn words and gives each document a new `_id`.
 *
 *   node --import tsx bench/synth-corpus.ts --docs 100000 --out corpus.jsonl [--seed 1] [--from real.jsonl]
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seededRandom } from './measure.js';

export interface SynthDoc { _id: string; title: string; text: string }

const VOCABULARY = 400_000;
const COMMON = ('the of and in to a is was for as on by with he that at from his it an were are which this also be ' +
  'has or had first one their its new after but who not they have her she two been other when there all during into ' +
  'school time may years more most only over city some world would where later up such used many can state about ' +
  'national out known university united then made three year between team while under film both part each season ' +
  'district since well through county american being these war early against series number than became i area no ' +
  'several around based because same high him would called north south government members following de including ' +
  'released group second until however work john life did before album music people won main river south could').split(' ');
const SYLLABLES = ['ka', 'ro', 'mi', 'ten', 'sa', 'lor', 've', 'dan', 'bri', 'co', 'mu', 'nel', 'tha', 'gor', 'pe', 'sin',
  'wa', 'fel', 'ha', 'dri', 'zo', 'lun', 'ber', 'qua', 'vis', 'an', 'el', 'ost', 'ir', 'um'];

const words: string[] = [];
function wordOf(rank: number): string {
  while (words.length <= rank) {
    const r = words.length;
    if (r < COMMON.length) { words.push(COMMON[r]!); continue; }
    // mixed-radix syllables, 2–5 of them: distinct for every rank, English-like enough for the stemmer
    let x = r;
    let w = '';
    do { w += SYLLABLES[x % SYLLABLES.length]; x = Math.floor(x / SYLLABLES.length); } while (x > 0);
    words.push(w.length < 4 ? `${w}ra` : w);
  }
  return words[rank]!;
}

/** A 0-based rank with P(rank) ∝ 1/(rank + 1), over [min, VOCABULARY). */
function zipfRank(random: () => number, min = 0): number {
  const lo = Math.log(min + 1);
  const hi = Math.log(VOCABULARY + 1);
  return Math.min(VOCABULARY - 1, Math.floor(Math.exp(lo + random() * (hi - lo))) - 1);
}

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** `count` synthetic documents. */
export function* synthDocs(count: number, seed = 1): Generator<SynthDoc> {
  const random = seededRandom(seed);
  for (let i = 0; i < count; i++) {
    const topics = Array.from({ length: 8 + Math.floor(random() * 33) }, () => zipfRank(random, 300));
    const titleWords = Array.from({ length: 1 + Math.floor(random() * 4) }, () => wordOf(topics[Math.floor(random() * topics.length)]!));
    const title = titleWords.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ');
    const length = random() < 0.01 ? 0 : Math.min(20_000, Math.max(5, Math.round(300 * Math.exp(0.9 * normal(random)))));
    const out: string[] = [];
    for (let t = 0; t < length; t++) {
      // topic words, earlier topics more often (a few dominate an article)
      const rank = random() < 0.2 ? topics[Math.floor(random() * random() * topics.length)]! : zipfRank(random);
      out.push(wordOf(rank));
      if (random() < 0.06) out[out.length - 1] += '.';
    }
    yield { _id: `s${seed}-${i}`, title, text: out.join(' ') };
  }
}

/**
 * The lines of a UTF-8 file (a `\r` before a `\n` left on its line, as JSON ignores it), read in chunks of
 * 4 MiB or more. A scale build reads its documents in its adding thread, where `node:readline` took 6.1–6.4
 * s of CPU for the 292k-article extract's lines and this 3.6–4.3 (with JSON.parse of each line): Lucene's
 * peer reads its lines through a 1 MiB buffered reader, and the engines are compared, not their readers.
 */
export function* lines(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(1 << 22);
    let have = 0; // bytes of a line not yet ended, at the buffer's start
    for (;;) {
      if (have === buf.length) {
        const grown = Buffer.allocUnsafe(2 * buf.length);
        buf.copy(grown, 0, 0, have);
        buf = grown;
      }
      const got = readSync(fd, buf, have, buf.length - have, null);
      const end = have + got;
      if (got === 0) {
        if (end > 0) yield buf.toString('utf8', 0, end);
        return;
      }
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl < 0) {
        have = end;
        continue;
      }
      const text = buf.toString('utf8', 0, nl);
      for (let from = 0; from <= text.length;) {
        let to = text.indexOf('\n', from);
        if (to < 0) to = text.length;
        yield text.slice(from, to);
        from = to + 1;
      }
      buf.copy(buf, 0, nl + 1, end);
      have = end - nl - 1;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * `count` documents from a real JSONL corpus, cycled; passes after the first perturbed (see the module
 * comment). Without `count`, the file once as it is.
 */
export async function* perturbedDocs(path: string, count?: number, seed = 1): AsyncGenerator<SynthDoc> {
  const random = seededRandom(seed);
  let n = 0;
  for (let pass = 0; count === undefined ? pass === 0 : n < count; pass++) {
    let inPass = 0;
    for (const line of lines(path)) {
      if (count !== undefined && n >= count) break;
      if (line.trim() === '') continue;
      let o: { _id?: unknown; title?: unknown; text?: unknown };
      try { o = JSON.parse(line) as typeof o; } catch { continue; }
      const title = typeof o.title === 'string' ? o.title : '';
      let text = typeof o.text === 'string' ? o.text : '';
      if (pass > 0) text = text.split(' ').map((w) => (random() < 0.1 ? wordOf(zipfRank(random)) : w)).join(' ');
      yield { _id: pass === 0 ? String(o._id ?? n) : `${String(o._id ?? inPass)}~${pass}`, title, text };
      n++;
      inPass++;
    }
    if (inPass === 0) return; // an empty file cannot be grown
  }
}

async function main(): Promise<void> {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const out = arg('out');
  const count = Number(arg('docs') ?? 100_000);
  if (!out || !Number.isInteger(count) || count < 0) throw new Error('usage: synth-corpus.ts --docs N --out file.jsonl [--seed S] [--from real.jsonl]');
  const seed = Number(arg('seed') ?? 1);
  const from = arg('from');
  const fd = openSync(out, 'w');
  let chunk: string[] = [];
  let bytes = 0;
  const flush = () => { const s = chunk.join(''); bytes += Buffer.byteLength(s); writeSync(fd, s); chunk = []; };
  const docs = from ? perturbedDocs(from, count, seed) : synthDocs(count, seed);
  for await (const d of docs) {
    chunk.push(`${JSON.stringify(d)}\n`);
    if (chunk.length >= 1000) flush();
  }
  flush();
  closeSync(fd);
  console.log(`${out}: ${count} documents, ${(bytes / 1e6).toFixed(1)} MB`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
