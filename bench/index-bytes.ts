/**
 * Where an index's postings and positions bytes go, by kind of term: the common words whose adjacent
 * pairs are grams (analysis/common-grams.ts), the grams, the `site:` terms, and the other terms by the
 * share of documents they are in. With `--codes N`, the positions of every common word and of every N-th
 * term of each other kind are also measured as binary interpolative coding would code them (each
 * document's positions within [0, length + TITLE_TEXT_POSITION_GAP), the middle one first in the fewest
 * bits its range allows, then each half within what the middle left it), against their Rice codes as
 * written (postings-format.ts): how far the positions' code is from a stronger one, measured rather than
 * guessed. The ratio is the sample's; the kind's bytes under the other code are estimated from it.
 * With `--words a,b,…`, the bytes of those words' terms (as analyzed) are also summed on a row of their
 * own, across the kinds: what an analyzer that dropped them as stop words would not have indexed.
 *
 *   node --import tsx bench/index-bytes.ts <index dir> [--codes 50] [--words a,an,and,…]
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeTerms } from '../src/engine/analysis/analyzer.js';
import { COMMON_GRAM_WORDS } from '../src/engine/analysis/common-grams.js';
import { readManifest } from '../src/engine/index/manifest.js';
import { RICE_ESCAPE, riceParameter } from '../src/engine/index/postings-format.js';
import { SegmentCore } from '../src/engine/index/segment-reader.js';
import { newTermInfo } from '../src/engine/index/term-dictionary.js';
import { GRAM_TERM_PREFIX, NO_MORE_DOCS, SITE_TERM_PREFIX, TITLE_TEXT_POSITION_GAP } from '../src/engine/index/types.js';
import { commandLine } from './command-line.js';

/** One kind of term's share of the index. */
export interface TermClass {
  name: string;
  terms: number;
  /** Postings (documents of its terms) and positions (occurrences, for the terms that keep them). */
  postings: number;
  positions: number;
  postingsBytes: number;
  positionsBytes: number;
  /** With `codes`: the sampled terms' positions, their bits as Rice-coded and as interpolative coding would take them. */
  sampled?: { positions: number; riceBits: number; interpolativeBits: number };
}

export interface IndexBytes {
  docs: number;
  classes: TermClass[];
  /** With `words`: their terms' share, whatever kind they are. */
  listed?: TermClass;
}

const emptyClass = (name: string): TermClass => ({ name, terms: 0, postings: 0, positions: 0, postingsBytes: 0, positionsBytes: 0 });

const CLASSES = ['common words', 'grams', 'site:', 'in ≥ 10 % of docs', 'in 1–10 %', 'in 0.1–1 %', 'in < 0.1 %'] as const;

function classOf(term: string, docFreq: number, maxDoc: number): (typeof CLASSES)[number] {
  if (term.startsWith(GRAM_TERM_PREFIX)) return 'grams';
  if (term.startsWith(SITE_TERM_PREFIX)) return 'site:';
  if (COMMON_GRAM_WORDS.has(term)) return 'common words';
  const share = docFreq / maxDoc;
  return share >= 0.1 ? 'in ≥ 10 % of docs' : share >= 0.01 ? 'in 1–10 %' : share >= 0.001 ? 'in 0.1–1 %' : 'in < 0.1 %';
}

/** Bits of a Rice code of `gap` with parameter `k`, as the writer codes it (escape included). */
function riceBits(gap: number, k: number): number {
  const q = gap >>> k;
  return q < RICE_ESCAPE ? q + 1 + k : RICE_ESCAPE + 5 + (32 - Math.clz32(gap));
}

/** Bits of the truncated binary code of one of `n` values, `v` (0 ≤ v < n). */
function truncatedBinaryBits(n: number, v: number): number {
  if (n <= 1) return 0;
  const k = 31 - Math.clz32(n);
  return v < 2 ** (k + 1) - n ? k : k + 1;
}

/** Bits of binary interpolative coding of the ascending `p[from, to)`, every one within [lo, hi]. */
export function interpolativeBits(p: ArrayLike<number>, from: number, to: number, lo: number, hi: number): number {
  const n = to - from;
  if (n <= 0 || hi - lo + 1 === n) return 0; // nothing left, or every value of the range: implied
  const mid = from + (n >>> 1);
  const least = lo + (mid - from);
  const most = hi - (to - 1 - mid);
  const v = p[mid]!;
  return truncatedBinaryBits(most - least + 1, v - least) + interpolativeBits(p, from, mid, lo, v - 1) + interpolativeBits(p, mid + 1, to, v + 1, hi);
}

/**
 * The breakdown of the index in `dir` (its current commit). `codes`: measure the codes of every common
 * word's and every codes-th other term's positions; `words`: sum these words' terms on a row of their own.
 */
export function indexBytes(dir: string, { codes = 0, words = [] }: { codes?: number; words?: readonly string[] } = {}): IndexBytes {
  const manifest = readManifest(dir);
  const classes = new Map<string, TermClass>(CLASSES.map((name) => [name, emptyClass(name)]));
  const wordTerms = new Set(words.flatMap((w) => analyzeTerms(w)));
  const listed = wordTerms.size > 0 ? emptyClass(`${words.length} words listed`) : undefined;
  let docs = 0;
  const info = newTermInfo();
  for (const { name } of manifest?.segments ?? []) {
    const core = new SegmentCore(dir, name);
    try {
      docs += core.maxDoc;
      const terms = core.termsOnce();
      const lengths = core.lengths;
      for (let ord = terms.first; ord < terms.end; ord++) {
        terms.info(ord, info);
        const term = terms.at(ord);
        const kind = classOf(term, info.docFreq, core.maxDoc);
        const c = classes.get(kind)!;
        const rows = listed !== undefined && wordTerms.has(term) ? [c, listed] : [c];
        for (const row of rows) {
          row.terms++;
          row.postings += info.docFreq;
          row.postingsBytes += info.postingsEnd - info.postingsStart;
          row.positionsBytes += info.positionsEnd - info.positionsStart;
        }
        const withPositions = info.positionsEnd > info.positionsStart;
        const sample = withPositions && codes > 0 && (kind === 'common words' || (c.terms - 1) % codes === 0);
        const cursor = core.cursor(ord, sample, true, terms);
        for (let d = cursor.nextDoc(); d !== NO_MORE_DOCS; d = cursor.nextDoc()) {
          const f = cursor.freq();
          if (withPositions) for (const row of rows) row.positions += f;
          if (!sample) continue;
          const p = cursor.positions();
          const length = lengths[d]!;
          const k = riceParameter(length, f);
          let rice = 0;
          for (let i = 0, last = -1; i < f; last = p[i++]!) rice += riceBits(p[i]! - last - 1, k);
          const s = (c.sampled ??= { positions: 0, riceBits: 0, interpolativeBits: 0 });
          s.positions += f;
          s.riceBits += rice;
          s.interpolativeBits += interpolativeBits(p, 0, f, 0, length + TITLE_TEXT_POSITION_GAP - 1);
        }
      }
      core.endSequential();
    } finally {
      core.close();
    }
  }
  return { docs, classes: [...classes.values()].filter((c) => c.terms > 0), ...(listed === undefined ? {} : { listed }) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const { option, positional: [dir] } = commandLine();
  if (dir === undefined) {
    console.error('usage: node --import tsx bench/index-bytes.ts <index dir> [--codes N] [--words a,b,…]');
    process.exit(2);
  }
  const codes = Number(option('codes') ?? 0);
  const words = option('words')?.split(',').filter((w) => w !== '') ?? [];
  const { docs, classes, listed } = indexBytes(dir, { codes, words });
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const total = classes.reduce((s, c) => s + c.postingsBytes + c.positionsBytes, 0);
  console.log(`# ${dir}: ${docs} documents, postings and positions ${mib(total)} MiB\n`);
  console.log('| terms | count | postings | postings MiB | positions | positions MiB | bits per position | share of the bytes |' + (codes > 0 ? ' sampled positions | interpolative / Rice bits | positions MiB, interpolative (estimated) |' : ''));
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|' + (codes > 0 ? '---:|---:|---:|' : ''));
  for (const c of listed === undefined ? classes : [...classes, listed]) {
    const bits = c.positions > 0 ? ((8 * c.positionsBytes) / c.positions).toFixed(2) : '–';
    const share = (100 * (c.postingsBytes + c.positionsBytes) / total).toFixed(1);
    const s = c === listed ? undefined : c.sampled;
    const sampled = codes === 0 ? '' : s === undefined ? ' – | – | – |' : ` ${s.positions} | ${(s.interpolativeBits / s.riceBits).toFixed(3)} | ${mib((c.positionsBytes * s.interpolativeBits) / s.riceBits)} |`;
    console.log(`| ${c.name} | ${c.terms} | ${c.postings} | ${mib(c.postingsBytes)} | ${c.positions} | ${mib(c.positionsBytes)} | ${bits} | ${share} % |${sampled}`);
  }
}
