/**
 * Executes a logical query over a snapshot: binds it (the Weight: one BM25 weight per distinct scoring
 * term, from global statistics) and walks each segment with the cheapest plan that gives the same answer:
 *
 * - **terms only, with required ones**, when even the most selective required iterator is dense:
 *   windowed accumulation (`accumulate.ts`), an AND of window bitsets;
 * - **disjunction** (no required term/phrase, only optional terms — free-text queries):
 *   - dense (postings ≥ ACCUMULATE_DENSITY × segment size): windowed accumulation (`accumulate.ts`), the
 *     top k and the exact `total` in the one pass that counting needs anyway;
 *   - sparse: the top k by block-max MaxScore (`maxscore.ts`), and the exact `total` by a separate
 *     counting pass over bitsets (`count.ts`), so pruning never has to visit a document only to count it;
 * - **leader** (everything else: required clauses, phrases, selective `site:` filters): a conjunction of
 *   the required iterators (the optional union standing in as one required iterator when nothing else is
 *   required) leads; each candidate is checked against exclusions and counted, and scored only while the
 *   block maxima of the query's terms around it (block-max, as MaxScore's windows) can reach the
 *   collector's threshold. A leader that is one postings list (a term, or the pair term that alone
 *   decides a two-word phrase) over a segment without deletes or exclusions is counted from its length
 *   and walks only the windows that can still reach the top k; a lone such phrase is bounded by its own
 *   score in the pair's blocks (Snapshot.phraseBounds), which also gives the walk a floor — so a
 *   phrase of common words matching most documents reads a few blocks.
 *
 * Before any of it, the common-terms rule (docs/ranking.md) splits the optional terms of a query without
 * required terms or phrases: when one of them is rare and another is common in the snapshot, the common
 * ones become *score-only*: they add to the score of a document another optional clause matches and
 * match nothing by themselves. Every plan treats them as such: accumulation scores them without setting
 * match bits, MaxScore keeps them non-essential (never a source of candidates), the leader walk leaves
 * them out of its union, and counting ignores them — so `total` never pays for their postings.
 *
 * One collector spans all segments, so the threshold found in one segment prunes the next.
 */
import { COMMON_GRAM_WORDS } from '../analysis/common-grams.js';
import { NO_MORE_DOCS, SITE_TERM_PREFIX, gramTerm, type PostingsCursor, type SegmentReader } from '../index/types.js';
import { roundScore } from '../rank/bm25.js';
import { TopK, type CollectedHit } from './collector.js';
import { accumulateTerms } from './accumulate.js';
import { countByWalking, countDisjunction, intersectionCount, type UnionMember } from './count.js';
import { checkDeadline } from './deadline.js';
import {
  EMPTY, PhraseIterator, TermIterator, UnionIterator, conjunction, matchesAt, type DocIterator,
} from './iterators.js';
import type { LogicalQuery, ScoringNode, TermNode } from './logical.js';
import { CidTies, blockBound, termFreq, topKDisjunction, type TermScorer } from './maxscore.js';
import { hasTermBits } from './segment-caches.js';
import { kthBound, type BlockBounds, type Snapshot } from './snapshot.js';

/**
 * A disjunction is accumulated (accumulate.ts) rather than run by MaxScore + bitset count when its
 * postings number at least this fraction of the segment's documents: the counting pass must decode them
 * all anyway, and scoring them on the way costs less than a pruned pass after it (bench/query-loop.ts).
 */
export const ACCUMULATE_DENSITY = 0.05;

/** A `site:` filter leads the walk instead of filtering MaxScore's candidates when it is this much cheaper. */
export const SITE_LEAD_RATIO = 8;

/**
 * The leader walk computes a term's exact block bounds (Snapshot.blockBounds) when its candidates number at
 * least 1/LEADER_BOUNDS_RATIO of the term's postings: a walk led by a rare term touches few blocks.
 */
export const LEADER_BOUNDS_RATIO = 8;

/** The leader walk checks the search's deadline once per this many candidates (a power of two). */
const CANDIDATES_PER_CHECK = 1024;

export interface Execution {
  /** Exact number of matching live documents. */
  total: number;
  /** The best min(k, total) hits, best first. */
  top: CollectedHit[];
}

/**
 * The logical query bound to a snapshot: `should` holds only the optional clauses that can make a
 * document match, `scoreOnly` the common optional terms that only score (empty unless the common-terms
 * rule applies).
 */
interface BoundQuery extends LogicalQuery {
  scoreOnly: TermNode[];
}

/**
 * The common-terms rule: a query with no required term or phrase, at least one rare optional term
 * (0 < df ≤ ratio·N) and at least one common one (df > ratio·N) keeps its rare terms and phrases as the
 * optional clauses that match, and its common terms as score-only terms. Any other query is unchanged.
 */
function bindCommonTerms(snap: Snapshot, q: LogicalQuery): BoundQuery {
  const unchanged = { ...q, scoreOnly: [] };
  if (q.must.length > 0) return unchanged;
  let rare = false;
  const common: TermNode[] = [];
  for (const n of q.should) {
    if (n.kind !== 'term') continue;
    if (snap.isCommon(n.term)) common.push(n);
    else if (snap.df(n.term) > 0) rare = true;
  }
  if (!rare || common.length === 0) return unchanged;
  const scoreOnly = new Set<ScoringNode>(common);
  return { ...q, should: q.should.filter((n) => !scoreOnly.has(n)), scoreOnly: common };
}

/** Distinct scoring terms of the query, numbered, with their weights. */
interface Weight {
  ids: Map<string, number>;
  weights: Float64Array;
}

/** A clause opened on one segment: its exact iterator and, per distinct term, a cursor to read tf from. */
interface OpenClause {
  node: ScoringNode;
  it: DocIterator;
  terms: { id: number; term: string; cursor: PostingsCursor }[];
}

export function execute(snap: Snapshot, logical: LogicalQuery, k: number): Execution {
  const scoring = [...logical.must, ...logical.should];
  // CONTRACT §2: without a required term or phrase a document must match an optional one, so a query
  // with neither (only `site:` filters and exclusions) matches nothing
  if (scoring.length === 0) return { total: 0, top: [] };
  if (snap.docCount === 0) return { total: 0, top: [] };
  const q = bindCommonTerms(snap, logical);

  const ids = new Map<string, number>();
  const w: number[] = [];
  for (const n of scoring) {
    for (const t of nodeTerms(n)) {
      if (ids.has(t)) continue;
      ids.set(t, w.length);
      w.push(snap.bm25.weight(snap.df(t)));
    }
  }
  const weight: Weight = { ids, weights: Float64Array.from(w) };
  const collector = k > 0 ? new TopK(k) : undefined;
  const floor = collector ? scoreFloor(snap, q, k) : -Infinity;
  const stamps = new Int32Array(w.length).fill(-1);
  let total = 0;
  for (const seg of snap.segments) {
    if (seg.liveDocs === 0) continue;
    checkDeadline();
    total += executeSegment(snap, seg, q, weight, collector, stamps, floor);
  }
  return { total, top: collector ? collector.sorted() : [] };
}

/** Bounds of a query's exact `total` on a snapshot: `low ≤ execute(snap, q, k).total ≤ high`. */
export interface TotalBounds { low: number; high: number }

/**
 * Bounds of the query's `total` from document frequencies alone, nothing decoded: what comparing the
 * total of a did-you-mean correction with the original's needs first (searcher.ts), as a corrected rare
 * word is most often far more frequent, or still too rare, to change the answer. A document matches every
 * required node and, without one, an optional node that can match (after the common-terms rule): a term
 * matches df(t) live documents, a phrase at most the least df of its terms. So a required node bounds the
 * total from above, and without one the optional nodes' sum does; from below, without required nodes,
 * filters or exclusions, every document of the most frequent optional term matches.
 */
export function totalBounds(snap: Snapshot, logical: LogicalQuery): TotalBounds {
  if (logical.must.length + logical.should.length === 0 || snap.docCount === 0) return { low: 0, high: 0 };
  const q = bindCommonTerms(snap, logical);
  const most = (n: ScoringNode): number => (n.kind === 'term' ? snap.df(n.term) : Math.min(...n.terms.map((t) => snap.df(t))));
  let high = snap.docCount;
  for (const n of q.must) high = Math.min(high, most(n));
  if (q.must.length > 0) return { low: 0, high };
  let sum = 0;
  let low = 0;
  for (const n of q.should) {
    sum += most(n);
    if (n.kind === 'term') low = Math.max(low, snap.df(n.term));
  }
  const filtered = q.mustNot.length > 0 || q.siteMust.length > 0 || q.siteShould.length > 0 || q.siteMustNot.length > 0;
  return { low: filtered ? 0 : low, high: Math.min(high, sum) };
}

/**
 * Whether `to` matches more live documents than `from` (`execute(snap, to, 0).total` against `from`'s),
 * found without counting either whole; undefined when either is more than a disjunction of terms (a
 * required clause, a phrase, an exclusion or a `site:` filter): then only counting tells. It is what
 * did-you-mean asks of a correction (searcher.ts), which differs from the query in a word or two. Two
 * disjunctions match the documents of their matching terms (after the common-terms rule), so their totals
 * differ only by the documents of the terms they do not share that none of the shared terms holds:
 *
 *   total(to) − total(from) = |U(to's own) \ U(shared)| − |U(from's own) \ U(shared)|
 *
 * `from`'s own terms (a misspelt word is rare) are counted outside the shared ones (a frequent one read
 * from its bitset when the query's count made one: a long query's are not made, see `executeSegment`),
 * then `to`'s only until they exceed that. On a million articles, counting the corrected query whole
 * took up to half a millisecond for one in five of the scale bench's short queries, and 20 ms on average
 * for its 300-word ones (every word of which is a candidate for correction).
 */
export function matchesMore(snap: Snapshot, to: LogicalQuery, from: LogicalQuery): boolean | undefined {
  const before = disjunctionTerms(bindCommonTerms(snap, from));
  const after = disjunctionTerms(bindCommonTerms(snap, to));
  if (before === undefined || after === undefined) return undefined;
  const kept = new Set(after);
  const shared = new Set(before.filter((t) => kept.has(t)));
  const outside = (seg: SegmentReader, terms: string[], stopAbove: number): number => {
    const union: DocIterator[] = [];
    for (const t of terms) {
      const c = shared.has(t) ? undefined : seg.postings(t);
      if (c) union.push(new TermIterator(c));
    }
    const others: UnionMember[] = [];
    for (const t of shared) {
      const bits = snap.keptTermBits(seg, t);
      if (bits !== undefined) {
        others.push({ it: EMPTY, bits }); // read from its bitset: no cursor
        continue;
      }
      const c = seg.postings(t);
      if (c) others.push({ it: new TermIterator(c) });
    }
    // the most frequent first: a document outside them all is the exception in a long query
    others.sort((a, b) => b.it.cost - a.it.cost);
    return countByWalking(union, [], others, snap.liveBits(seg), stopAbove);
  };
  let lost = 0;
  for (const seg of snap.segments) if (seg.liveDocs > 0) lost += outside(seg, before, Infinity);
  let gained = 0;
  for (const seg of snap.segments) {
    if (seg.liveDocs === 0) continue;
    gained += outside(seg, after, lost - gained);
    if (gained > lost) return true;
  }
  return false;
}

/** The terms of a query that is a disjunction of terms alone, the ones that match (not score-only); else undefined. */
function disjunctionTerms(q: BoundQuery): string[] | undefined {
  if (q.must.length > 0 || q.mustNot.length > 0 || q.siteMust.length > 0 || q.siteShould.length > 0 || q.siteMustNot.length > 0) return undefined;
  const terms: string[] = [];
  for (const n of q.should) {
    if (n.kind !== 'term') return undefined;
    terms.push(n.term);
  }
  return terms;
}

/**
 * A score the k-th best hit is known to reach before any document is scored, or -Infinity. In a query
 * with no required clause, no filter and no exclusion, a document with an optional term matches, so the
 * k-th largest of a term's attained block bounds over all segments (Snapshot.blockBounds, kthBound) is
 * reached by k matching documents. Only bounds already kept are read: the segments compute them.
 */
function scoreFloor(snap: Snapshot, q: BoundQuery, k: number): number {
  if (q.must.length > 0 || q.mustNot.length > 0 || q.siteMust.length > 0 || q.siteShould.length > 0 || q.siteMustNot.length > 0) return -Infinity;
  let floor = -Infinity;
  for (const n of q.should) {
    if (n.kind !== 'term') continue;
    const kept: BlockBounds[] = [];
    for (const seg of snap.segments) {
      const b = seg.liveDocs > 0 ? snap.blockBounds(seg, n.term, false) : undefined;
      if (b) kept.push(b);
    }
    if (kept.length > 0) floor = Math.max(floor, kthBound(kept, k));
  }
  return floor;
}

const nodeTerms = (n: ScoringNode): string[] => (n.kind === 'term' ? [n.term] : n.terms);

function openNode(seg: SegmentReader, n: ScoringNode, weight: Weight): OpenClause | undefined {
  if (n.kind === 'term') {
    const cursor = seg.postings(n.term);
    if (!cursor) return undefined;
    return { node: n, it: new TermIterator(cursor), terms: [{ id: weight.ids.get(n.term) ?? -1, term: n.term, cursor }] };
  }
  // one cursor per distinct term; slots map each phrase offset to its term's cursor
  const distinct: string[] = [];
  const slots = new Int32Array(n.terms.length);
  n.terms.forEach((t, i) => {
    let k = distinct.indexOf(t);
    if (k < 0) k = distinct.push(t) - 1;
    slots[i] = k;
  });
  // the phrase's pairs of common words, when the segment indexes them: a pair in no document of the
  // segment means the phrase is in none either
  const gramTerms = new Set<string>();
  if (seg.commonGrams) {
    for (let i = 0; i + 1 < n.terms.length; i++) {
      const [a, b] = [n.terms[i]!, n.terms[i + 1]!];
      if (COMMON_GRAM_WORDS.has(a) && COMMON_GRAM_WORDS.has(b)) gramTerms.add(gramTerm(a, b));
    }
  }
  const grams: PostingsCursor[] = [];
  for (const g of gramTerms) {
    const c = seg.postings(g);
    if (!c) return undefined;
    grams.push(c);
  }
  const exact = n.terms.length === 2 && grams.length === 1;
  const cursors: PostingsCursor[] = [];
  for (const t of distinct) {
    const c = seg.postings(t, { positions: n.terms.length > 1 && !exact });
    if (!c) return undefined;
    cursors.push(c);
  }
  const terms = distinct.map((t, i) => ({ id: weight.ids.get(t) ?? -1, term: t, cursor: cursors[i]! }));
  return { node: n, it: n.terms.length === 1 ? new TermIterator(cursors[0]!) : new PhraseIterator(cursors, slots, grams, exact), terms };
}

function openSite(seg: SegmentReader, host: string): DocIterator | undefined {
  const c = seg.postings(SITE_TERM_PREFIX + host);
  return c ? new TermIterator(c) : undefined;
}

/** Clause iterators of one segment; undefined when the segment cannot match. */
interface Opened {
  must: OpenClause[];
  should: OpenClause[];
  /** Score-only terms present in the segment. */
  scoreOnly: OpenClause[];
  exclusions: DocIterator[];
  /** Required site iterators, the optional-site union counted as one. */
  siteFilters: DocIterator[];
}

function open(seg: SegmentReader, q: BoundQuery, weight: Weight): Opened | undefined {
  const must: OpenClause[] = [];
  for (const n of q.must) {
    const c = openNode(seg, n, weight);
    if (!c) return undefined;
    must.push(c);
  }
  const should: OpenClause[] = [];
  for (const n of q.should) {
    const c = openNode(seg, n, weight);
    if (c) should.push(c);
  }
  if (q.must.length === 0 && q.should.length > 0 && should.length === 0) return undefined;
  const scoreOnly: OpenClause[] = [];
  for (const n of q.scoreOnly) {
    const c = openNode(seg, n, weight);
    if (c) scoreOnly.push(c);
  }
  const siteFilters: DocIterator[] = [];
  for (const h of q.siteMust) {
    const it = openSite(seg, h);
    if (!it) return undefined;
    siteFilters.push(it);
  }
  if (q.siteShould.length > 0) {
    const its = q.siteShould.map((h) => openSite(seg, h)).filter((it): it is DocIterator => it !== undefined);
    if (its.length === 0) return undefined;
    siteFilters.push(its.length === 1 ? its[0]! : new UnionIterator(its));
  }
  const exclusions: DocIterator[] = [];
  for (const n of q.mustNot) {
    const c = openNode(seg, n, weight);
    if (c) exclusions.push(c.it);
  }
  for (const h of q.siteMustNot) {
    const it = openSite(seg, h);
    if (it) exclusions.push(it);
  }
  return { must, should, scoreOnly, exclusions, siteFilters };
}

function executeSegment(
  snap: Snapshot, seg: SegmentReader, q: BoundQuery, weight: Weight, collector: TopK | undefined, stamps: Int32Array,
  floor: number,
): number {
  const opened = open(seg, q, weight);
  if (!opened) return 0;
  // every scorer one literal shape, its bounds undefined when none are given (not spread from another
  // with them added): the scoring loops' property loads see one hidden class
  const scorerOf = (c: OpenClause, bounds: BlockBounds | undefined, freqs: Uint8Array | undefined): TermScorer =>
    ({ cursor: c.terms[0]!.cursor, weight: weight.weights[c.terms[0]!.id]!, bounds, freqs });
  const scorersOf = (clauses: OpenClause[]): TermScorer[] => clauses.map((c) => scorerOf(c, undefined, undefined));
  // terms read only at the documents others propose: from their frequency columns where kept
  const probedScorersOf = (clauses: OpenClause[]): TermScorer[] =>
    clauses.map((c) => scorerOf(c, undefined, snap.termFreqs(seg, c.terms[0]!.term)));
  // pruning reads block bounds; the exact ones of frequent terms prune where the index's own cannot.
  // Score-only terms never propose a candidate, so their bounds are used when kept but not computed.
  const boundedScorersOf = (clauses: OpenClause[], compute: boolean): TermScorer[] =>
    clauses.map((c) => scorerOf(c, snap.blockBounds(seg, c.terms[0]!.term, compute), snap.termFreqs(seg, c.terms[0]!.term)));
  const siteCost = opened.siteFilters.reduce((m, f) => Math.min(m, f.cost), Infinity);
  const termsOnly = q.must.every((n) => n.kind === 'term') && q.should.every((n) => n.kind === 'term');
  const dense = (cost: number) => cost >= seg.maxDoc * ACCUMULATE_DENSITY;

  if (termsOnly && q.must.length > 0) {
    // required terms: accumulate only when even the most selective required iterator is dense — a
    // sparse one leads the walk far more cheaply than decoding every posting
    const leaderCost = Math.min(siteCost, ...opened.must.map((c) => c.it.cost));
    // ... unless the required words are alone and each has a bitset: then the count intersects the
    // bitsets, no posting decoded, and the top k is MaxScore's over the words, a candidate accepted where
    // every bitset (and the live documents') holds it ("+of +the" on a million articles: 31 ms accumulated)
    const alone = opened.must.length > 1 && opened.should.length === 0 && opened.scoreOnly.length === 0
      && opened.siteFilters.length === 0 && opened.exclusions.length === 0;
    // (which words have bitsets their document frequencies say: none is made unless all are)
    const sets = alone && (snap.plan === 'maxscore' || (snap.plan === 'auto' && dense(leaderCost)))
      && opened.must.every((c) => hasTermBits(c.it.cost, seg.maxDoc))
      ? opened.must.map((c) => snap.termBits(seg, (c.node as TermNode).term)!) : undefined;
    if (sets !== undefined) {
      const live = snap.liveBits(seg);
      const total = intersectionCount(sets, live);
      if (collector && total > 0) {
        const accept = (doc: number): boolean => {
          const w = doc >>> 5;
          const m = 1 << (doc & 31);
          if (live !== undefined && (live[w]! & m) === 0) return false;
          for (const b of sets) if ((b[w]! & m) === 0) return false;
          return true;
        };
        topKDisjunction(seg, boundedScorersOf(opened.must, true), [], accept, collector, snap.bm25, snap.norms(seg), -Infinity,
          new CidTies(snap.cidFloors(seg), collector));
      }
      return total;
    }
    if (snap.plan === 'accumulate' || (snap.plan === 'auto' && dense(leaderCost))) {
      return accumulateTerms(seg, scorersOf(opened.must), probedScorersOf(opened.should), probedScorersOf(opened.scoreOnly),
        opened.siteFilters, opened.exclusions, snap.liveBits(seg), collector, snap.bm25, snap.norms(seg));
    }
  } else if (termsOnly && opened.should.length > 0) {
    let shouldCost = 0;
    for (const c of opened.should) shouldCost += c.it.cost;
    if (siteCost * SITE_LEAD_RATIO >= shouldCost) {
      // frequent terms are counted from their cached bitsets, so their postings cost the count nothing;
      // they leave the cost that chooses accumulation when MaxScore need not decode them either: a word
      // in most documents, or one with exact block bounds (Snapshot.blockBounds) to skip its blocks by.
      // The bitsets are made only for the count: an accumulated query (a long one, mostly) counts as it
      // scores, and making them for it took a pass over each of its frequent terms and pushed the
      // bitsets of shorter queries out of the cache.
      const frequent = opened.should.map((c) => hasTermBits(c.it.cost, seg.maxDoc));
      let countCost = 0;
      opened.should.forEach((c, i) => {
        const skippable = frequent[i] && (c.it.cost > snap.commonTermRatio * seg.maxDoc || c.it.cost >= snap.blockBoundsMinPostings);
        if (!skippable) countCost += c.it.cost;
      });
      if (snap.plan === 'accumulate' || (snap.plan === 'auto' && dense(countCost))) {
        return accumulateTerms(seg, [], scorersOf(opened.should), probedScorersOf(opened.scoreOnly), opened.siteFilters,
          opened.exclusions, snap.liveBits(seg), collector, snap.bm25, snap.norms(seg));
      }
      // counting consumes its own iterators; the top-k pass gets fresh ones
      const union = opened.should.map((c, i) => ({ it: c.it, bits: frequent[i] ? snap.termBits(seg, (c.node as TermNode).term) : undefined }));
      const total = countDisjunction(seg, union, opened.siteFilters, opened.exclusions, snap.liveBits(seg));
      if (collector && total > 0) {
        const fresh = open(seg, q, weight)!;
        const filtered = seg.liveDocs < seg.maxDoc || fresh.siteFilters.length > 0 || fresh.exclusions.length > 0;
        const accept = !filtered ? undefined : (doc: number): boolean => {
          if (!seg.isLive(doc)) return false;
          for (const f of fresh.siteFilters) if (!matchesAt(f, doc)) return false;
          for (const e of fresh.exclusions) if (matchesAt(e, doc)) return false;
          return true;
        };
        topKDisjunction(seg, boundedScorersOf(fresh.should, true), boundedScorersOf(fresh.scoreOnly, false), accept, collector, snap.bm25, snap.norms(seg), floor,
          new CidTies(snap.cidFloors(seg), collector));
      }
      return total;
    }
  }
  return leaderWalk(snap, seg, q, opened, weight, collector, stamps);
}

let stampCounter = 0;

function leaderWalk(
  snap: Snapshot, seg: SegmentReader, q: BoundQuery, o: Opened, weight: Weight, collector: TopK | undefined, stamps: Int32Array,
): number {
  const required: DocIterator[] = [...o.must.map((c) => c.it), ...o.siteFilters];
  const needShould = q.must.length === 0 && q.should.length > 0;
  if (needShould) required.push(o.should.length === 1 ? o.should[0]!.it : new UnionIterator(o.should.map((c) => c.it)));
  const leader = conjunction(required);
  if (!leader) return 0;
  const round = snap.bm25.round;
  const norms = collector ? snap.norms(seg) : undefined;
  const weights = weight.weights;
  const nMust = o.must.length;
  const scoring = [...o.must, ...o.should, ...o.scoreOnly];
  // optional terms only probed at candidates (not in the leading union) read a kept frequency column
  const columns = scoring.map((c, ci) => (collector && ci >= nMust && c.node.kind === 'term' && (!needShould || ci >= nMust + o.should.length)
    ? snap.termFreqs(seg, c.node.term) : undefined));
  // one cursor per distinct scoring term, for block-max bounds: the sum of the bounds of the blocks that
  // hold the candidate bounds its score; it holds up to the nearest of those blocks' ends (`windowEnd`)
  const bounded = new Map<number, OpenClause['terms'][number]>();
  for (const c of scoring) for (const t of c.terms) if (t.id >= 0 && !bounded.has(t.id)) bounded.set(t.id, t);
  // one postings list, every document live, nothing excluded: its length is the count, and the walk
  // only has to visit the windows whose bound can still reach the top k
  const list = o.exclusions.length === 0 && seg.liveDocs === seg.maxDoc ? leader.list : undefined;
  const known = list?.docFreq;
  if (known !== undefined && !collector) return known;
  // a lone phrase decided by its pair term is bounded by its own score in the pair's blocks; other
  // walks by their terms' block bounds, exact ones computed only when the walk's candidates are many
  // next to the term's postings
  const lone = scoring.length === 1 && scoring[0]!.it === leader ? scoring[0]!.node : undefined;
  const phrase = collector && list !== undefined && lone?.kind === 'phrase' && lone.terms.length === 2
    ? snap.phraseBounds(seg, [lone.terms[0]!, lone.terms[1]!]) : undefined;
  // the phrase's k-th largest block bound is reached by k of its documents: the top k's floor
  const floor = phrase !== undefined ? kthBound([phrase], collector!.k) : -Infinity;
  const boundTerms = phrase !== undefined ? [{ cursor: list!, weight: 0, exact: phrase }] : [...bounded.values()].map((t) => ({
    cursor: t.cursor, weight: weights[t.id]!,
    exact: collector ? snap.blockBounds(seg, t.term, leader.cost * LEADER_BOUNDS_RATIO >= t.cursor.docFreq) : undefined,
  }));
  let windowStart = -1;
  let windowEnd = -1;
  let windowBound = Infinity;
  const ties = collector ? new CidTies(snap.cidFloors(seg), collector) : undefined;
  /** No document of the window can enter the top k at threshold `t` (a tie only against the collector's own threshold). */
  const shut = (t: number): boolean =>
    windowBound < t || (windowBound === t && t === collector!.minCompetitive && ties!.excluded(windowStart, windowEnd));
  /** The window from `at` to the nearest end of a bounded term's block holding it, and its bound. */
  const openWindow = (at: number): void => {
    windowStart = at;
    windowEnd = NO_MORE_DOCS;
    windowBound = 0;
    for (const t of boundTerms) {
      const end = t.cursor.shallowAdvance(at);
      if (end === NO_MORE_DOCS) continue; // no posting at or after `at`: contributes nothing
      windowBound += blockBound(snap.bm25, t.weight, t.cursor, t.exact);
      if (end < windowEnd) windowEnd = end;
    }
  };
  let count = 0;
  let candidates = 0;
  for (let doc = leader.nextDoc(), skip = false; doc !== NO_MORE_DOCS; doc = skip ? leader.advance(windowStart) : leader.nextDoc()) {
    skip = false;
    if ((++candidates & CANDIDATES_PER_CHECK - 1) === 0) checkDeadline();
    if (!seg.isLive(doc)) continue;
    let excluded = false;
    for (const e of o.exclusions) if (matchesAt(e, doc)) { excluded = true; break; }
    if (excluded) continue;
    count++;
    if (!collector) continue;
    const t = collector.minCompetitive > floor ? collector.minCompetitive : floor;
    if (t > -Infinity) {
      if (doc > windowEnd) openWindow(doc);
      if (shut(t)) {
        // counted; cannot enter the top k. With the count known, neither can the rest of its window:
        // the walk moves on to the next window whose bound can, read from the skip data alone
        if (known !== undefined) {
          while (shut(t) && windowEnd !== NO_MORE_DOCS) openWindow(windowEnd + 1);
          if (shut(t)) break;
          skip = true;
        }
        continue;
      }
    }
    const stamp = (stampCounter = (stampCounter + 1) | 0);
    const norm = norms!.at(doc);
    let score = 0;
    for (let ci = 0; ci < scoring.length; ci++) {
      const c = scoring[ci]!;
      const column = columns[ci];
      // a term read from its column matches where the column holds a frequency
      if (column === undefined ? ci >= nMust && !matchesAt(c.it, doc) : column[doc] === 0) continue;
      for (const t of c.terms) {
        if (t.id < 0 || stamps[t.id] === stamp) continue; // a term of several matched clauses counts once
        stamps[t.id] = stamp;
        // a clause's cursors sit on doc, except those an exact phrase left behind (it matched by its gram)
        // and a column's term, read there
        const tf = termFreq(t.cursor, column, doc);
        const s = (weights[t.id]! * tf) / (tf + norm); // rank/bm25.ts Bm25.score
        score += round ? roundScore(s) : s;
      }
    }
    collector.offer(score, seg, doc);
  }
  return known ?? count;
}
