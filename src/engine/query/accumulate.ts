/**
 * Top-k *and* exact count of a query of terms in one pass — optional terms (a disjunction), or required
 * terms plus optional ones — by accumulation over windows of doc numbers (term-at-a-time within a window,
 * as Lucene's BooleanScorer): every posting adds its integer contribution to a per-window score array and
 * sets a bit in a per-window bitset (required terms: the AND of their bitsets; otherwise the OR); the
 * bitset is then intersected with the live documents and `site:` filters and cleared of exclusions, its
 * population is the count, and its set bits are offered to the collector.
 *
 * Terms that only add to the score of a match — the optional terms beside required ones, and the
 * score-only common terms — are not accumulated: once a window's matches and partial scores are known,
 * each match reads them (from a common term's frequency column, else by advancing the term's cursor to
 * it; maxscore.ts `termFreq`), highest bound first, and stops as soon as the
 * bounds left (each term's maximum contribution over its whole list) cannot lift it to the collector's
 * threshold. Counting never reads them. In a disjunction, the optional terms of lowest bound become
 * *non-essential* once their bounds sum below half the threshold (NON_ESSENTIAL_SHARE; MaxScore's
 * partition, as Lucene's MaxScoreBulkScorer makes it per window): their postings are walked for the count
 * but scored only at the documents the essential terms left within reach of the threshold.
 *
 * Why it exists beside MaxScore: `total` must be exact, so every posting of a disjunction is decoded by
 * the counting pass whatever the top-k does, and the block codec decodes a posting's frequency with its
 * doc id. Adding one division per posting to that unavoidable pass costs less than MaxScore's candidate
 * loop after it once the postings are a noticeable part of the segment (bench/query-loop.ts measures
 * both). `executor.ts` chooses (ACCUMULATE_DENSITY); every plan gives identical answers (the property
 * tests force each one).
 */
import { NO_MORE_DOCS, type PostingsCursor, type SegmentReader } from '../index/types.js';
import { roundScore, type Bm25 } from '../rank/bm25.js';
import type { Norms } from './norms.js';
import type { TopK } from './collector.js';
import type { DocIterator } from './iterators.js';
import { termFreq, type TermScorer } from './maxscore.js';
import { checkDeadline } from './deadline.js';
import { popcount } from './bit-count.js';

/** Documents per accumulation window: the score array (8 B/doc) and bitsets stay in L1/L2 cache. */
export const ACCUMULATE_WINDOW = 4096;

// Scratch arrays reused by every call: a search is synchronous and this function never re-enters, so
// one set serves all searches without allocating (and collecting) 40 KB per query and segment.
const SCORES = new Float64Array(ACCUMULATE_WINDOW);
const BITS = new Uint32Array(ACCUMULATE_WINDOW >>> 5);
const MASK = new Uint32Array(ACCUMULATE_WINDOW >>> 5);
const CANDIDATES = new Uint32Array(ACCUMULATE_WINDOW >>> 5);
/**
 * An optional term of a disjunction is non-essential in a window while the bounds of the non-essential
 * terms, with the score-only terms', sum below this share of the collector's threshold: a document must
 * then get at least the rest of the threshold from the essential terms before the non-essential ones
 * score it. With the whole threshold (MaxScore's partition) nearly every document the essential terms
 * matched stayed within reach, and walking the non-essential postings cost as much as scoring them: on
 * the Wikipedia extract's 300-word paragraphs, a median per-query time ratio of 0.98 against 0.92 at
 * one half (0.93 at 0.35).
 */
export const NON_ESSENTIAL_SHARE = 0.5;

/** Marks in `mask` the docs of `it` within [base, end), as window offsets. */
function markWindow(it: DocIterator, mask: Uint32Array, base: number, end: number): void {
  let d = it.doc();
  if (d < base) d = it.advance(base);
  while (d < end) {
    const o = d - base;
    mask[o >>> 5]! |= 1 << (o & 31);
    d = it.nextDoc();
  }
}

/** Adds every posting of `c` in [base, end) to the window: its contribution to `scores` (when scoring) and its bit. */
function accumulateWindow(
  c: PostingsCursor, w: number, base: number, end: number, bits: Uint32Array, scores: Float64Array | undefined,
  norms: Norms, round: boolean,
): void {
  let d = c.doc();
  if (d < base) d = c.advance(base);
  if (scores) {
    while (d < end) {
      const o = d - base;
      const tf = c.freq();
      const s = (w * tf) / (tf + norms.at(d)); // rank/bm25.ts Bm25.score
      scores[o] += round ? roundScore(s) : s;
      bits[o >>> 5]! |= 1 << (o & 31);
      d = c.nextDoc();
    }
  } else {
    while (d < end) {
      const o = d - base;
      bits[o >>> 5]! |= 1 << (o & 31);
      d = c.nextDoc();
    }
  }
}

/**
 * Marks every posting of `c` in [base, end) in `bits` (the count needs it) and adds its contribution to
 * `scores` only where `candidates` has the document's bit: a non-essential term's postings, whose
 * contributions cannot lift any other document of the window to the threshold.
 */
function accumulateCandidates(
  c: PostingsCursor, w: number, base: number, end: number, bits: Uint32Array, candidates: Uint32Array, scores: Float64Array,
  norms: Norms, round: boolean,
): void {
  let d = c.doc();
  if (d < base) d = c.advance(base);
  while (d < end) {
    const o = d - base;
    bits[o >>> 5]! |= 1 << (o & 31);
    if ((candidates[o >>> 5]! & (1 << (o & 31))) !== 0) {
      const tf = c.freq();
      const s = (w * tf) / (tf + norms.at(d)); // rank/bm25.ts Bm25.score
      scores[o] += round ? roundScore(s) : s;
    }
    d = c.nextDoc();
  }
}

/**
 * Counts the live documents of `seg` that match every `required` term (or, with none required, any
 * `optional` one), every filter and no exclusion, and offers each with its exact score — the sum over the
 * required terms and the optional and `scoreOnly` terms it contains — to `collector` (when given).
 * `scoreOnly` terms never make a document match. Returns the count.
 */
export function accumulateTerms(
  seg: SegmentReader, required: TermScorer[], optional: TermScorer[], scoreOnly: TermScorer[], filters: DocIterator[],
  exclusions: DocIterator[], live: Uint32Array | undefined, collector: TopK | undefined, bm25: Bm25, norms: Norms,
): number {
  const W = ACCUMULATE_WINDOW;
  const words = W >>> 5;
  const scores = collector ? SCORES : undefined;
  const bits = BITS;
  const mask = MASK;
  const round = bm25.round;
  const nr = required.length;
  const bound = (t: TermScorer) => bm25.score(t.weight, t.cursor.maxFreq, t.cursor.minLength);
  // terms whose postings make a document match: the optional ones when nothing is required, by
  // ascending bound (the non-essential ones are a prefix of them)
  const opt = nr > 0 ? [] : [...optional].sort((x, y) => bound(x) - bound(y));
  const optBounds = Float64Array.from(opt, bound);
  // terms that only add to the score of a match (read only when scoring): the score-only ones, and the
  // optional ones too when a term is required. Highest bound first, with rest[j] = Σ bounds of extra[j..].
  const extra = !collector ? [] : nr > 0 ? [...optional, ...scoreOnly] : [...scoreOnly];
  extra.sort((x, y) => bound(y) - bound(x));
  const ne = extra.length;
  const rest = new Float64Array(ne + 1);
  for (let j = ne - 1; j >= 0; j--) rest[j] = rest[j + 1]! + bound(extra[j]!);
  // MaxScore's partition within the accumulation (as Lucene's MaxScoreBulkScorer): the optional terms of
  // lowest bound whose bounds, with the score-only ones', sum below a share of the collector's threshold
  // (NON_ESSENTIAL_SHARE) cannot make a document competitive on their own. Their postings are still
  // walked, for the count, but scored only at the documents the essential ones (accumulated first) leave
  // within reach of the threshold.
  let nonEssential = 0;
  let nonEssentialBound = 0;
  const candidates = CANDIDATES;
  let count = 0;

  for (let base = 0; base < seg.maxDoc; base += W) {
    checkDeadline();
    const end = Math.min(base + W, seg.maxDoc);
    // Where is the next posting that can matter? Required terms: the window is empty unless every one has
    // a posting in it, and the next candidate window is the furthest of their next postings.
    let next = nr > 0 ? -1 : NO_MORE_DOCS;
    let skip = false;
    for (let i = 0; i < nr; i++) {
      const c = required[i]!.cursor;
      let d = c.doc();
      if (d < base) d = c.advance(base);
      if (d >= end) { skip = true; if (d > next) next = d; }
    }
    if (!skip && nr === 0) {
      skip = true;
      for (const o of opt) {
        const c = o.cursor;
        let d = c.doc();
        if (d < base) d = c.advance(base);
        if (d < end) { skip = false; break; }
        if (d < next) next = d;
      }
    }
    if (skip) {
      if (next === NO_MORE_DOCS) break;
      base = Math.floor(next / W) * W - W; // jump to the window holding the next candidate
      continue;
    }
    bits.fill(0);
    if (scores) scores.fill(0);
    if (nr > 0) {
      // bits = AND of the required terms' window bitsets; scores summed on the way
      for (let i = 0; i < nr; i++) {
        const target = i === 0 ? bits : mask;
        if (i > 0) mask.fill(0);
        accumulateWindow(required[i]!.cursor, required[i]!.weight, base, end, target, scores, norms, round);
        if (i > 0) for (let k = 0; k < words; k++) bits[k]! &= mask[k]!;
      }
    } else {
      if (collector) {
        // the threshold only rises: once non-essential, a term stays so
        const t = collector.minCompetitive;
        while (nonEssential < opt.length && nonEssentialBound + optBounds[nonEssential]! + rest[0]! < t * NON_ESSENTIAL_SHARE) nonEssentialBound += optBounds[nonEssential++]!;
      }
      for (let i = nonEssential; i < opt.length; i++) accumulateWindow(opt[i]!.cursor, opt[i]!.weight, base, end, bits, scores, norms, round);
      if (nonEssential > 0) {
        // candidates: the documents whose essential score, with every bound left, reaches the threshold
        const reach = collector!.minCompetitive - nonEssentialBound - rest[0]!;
        for (let k = 0; k < words; k++) {
          let word = bits[k]!;
          let cand = 0;
          while (word !== 0) {
            const bit = 31 - Math.clz32(word & -word);
            word &= word - 1;
            if (scores![(k << 5) | bit]! >= reach) cand |= 1 << bit;
          }
          candidates[k] = cand;
        }
        for (let i = 0; i < nonEssential; i++) accumulateCandidates(opt[i]!.cursor, opt[i]!.weight, base, end, bits, candidates, scores!, norms, round);
      }
    }
    for (const f of filters) {
      mask.fill(0);
      markWindow(f, mask, base, end);
      for (let i = 0; i < words; i++) bits[i]! &= mask[i]!;
    }
    for (const x of exclusions) {
      let d = x.doc();
      if (d < base) d = x.advance(base);
      while (d < end) {
        const o = d - base;
        bits[o >>> 5]! &= ~(1 << (o & 31));
        d = x.nextDoc();
      }
    }
    const liveBase = base >>> 5;
    for (let i = 0; i < words; i++) {
      let word = bits[i]!;
      if (word === 0) continue;
      if (live) word &= live[liveBase + i] ?? 0;
      if (word === 0) continue;
      count += popcount(word);
      if (!collector) continue;
      while (word !== 0) {
        const bit = 31 - Math.clz32(word & -word);
        word &= word - 1;
        const o = (i << 5) | bit;
        let score = scores![o]!;
        if (score + rest[0]! < collector.minCompetitive) continue;
        if (ne > 0) {
          // the extra terms, as MaxScore's non-essential ones: advanced to this match only while their
          // remaining bounds can still lift it to the threshold (ties at it can still enter)
          const d = base + o;
          const norm = norms.at(d);
          let j = 0;
          for (; j < ne; j++) {
            if (score + rest[j]! < collector.minCompetitive) break;
            const tf = termFreq(extra[j]!.cursor, extra[j]!.freqs, d);
            if (tf > 0) {
              const s = (extra[j]!.weight * tf) / (tf + norm);
              score += round ? roundScore(s) : s;
            }
          }
          if (j < ne) continue;
        }
        collector.offer(score, seg, base + o);
      }
    }
  }
  return count;
}
