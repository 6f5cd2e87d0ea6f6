/**
 * Which segments to merge after a commit: a tiered policy. Segments are grouped into tiers by live size
 * (tier k holds sizes in [floor·factor^k, floor·factor^(k+1)), everything under `floor` in tier 0); when
 * a tier holds `factor` segments they are merged into one of the next tier. Under steady small commits
 * the count therefore stays below `factor − 1` per tier, i.e. O(factor · log(size)), and each document
 * is rewritten O(log(size)) times. A segment more than half deleted is rewritten on its own, and a
 * segment with no live document is dropped without a merge.
 *
 * `maxMergedBytes` bounds what one merge produces (its sources' live bytes), not only which segments may
 * take part: a segment's size is what a query pays per segment and what each later merge rewrites
 * (docs/index-format.md, "Merges"). A full tier whose smallest segments exceed it together merges as
 * many of them as fit, at least two, or waits.
 */
import type { ManifestSegment } from './manifest.js';

export interface MergePolicyOptions {
  /** Segments per tier before they merge (≥ 2). */
  mergeFactor: number;
  /** Live bytes under which all segments count as the smallest tier. */
  floorBytes: number;
  /** Most live bytes one merge may produce; larger segments are never merged with others (0 = no limit). */
  maxMergedBytes: number;
}

export function liveBytes(s: ManifestSegment): number {
  return s.maxDoc === 0 ? 0 : s.bytes * ((s.maxDoc - s.deleted) / s.maxDoc);
}

/** Groups of segment names to merge, each group into one new segment. */
export function findMerges(segments: readonly ManifestSegment[], o: MergePolicyOptions): string[][] {
  const out: string[][] = [];
  const tiers = new Map<number, ManifestSegment[]>();
  const factor = Math.max(2, o.mergeFactor);
  for (const s of segments) {
    const live = s.maxDoc - s.deleted;
    if (live === 0) continue; // dropped by the caller
    const size = liveBytes(s);
    if (o.maxMergedBytes > 0 && size > o.maxMergedBytes) continue;
    if (s.deleted * 2 > s.maxDoc) {
      out.push([s.name]);
      continue;
    }
    const tier = size <= o.floorBytes ? 0 : Math.floor(Math.log(size / o.floorBytes) / Math.log(factor)) + 1;
    let list = tiers.get(tier);
    if (list === undefined) tiers.set(tier, (list = []));
    list.push(s);
  }
  for (const [, list] of [...tiers].sort((a, b) => a[0] - b[0])) {
    // every full group of the tier, smallest first: one commit after a long import holds hundreds of
    // flushed segments, and a single group per tier and round left most of them unmerged
    list.sort((a, b) => liveBytes(a) - liveBytes(b));
    for (let at = 0; list.length - at >= factor;) {
      const group: string[] = [];
      let bytes = 0;
      for (; at < list.length; at++) {
        const s = list[at]!;
        if (group.length === factor || (o.maxMergedBytes > 0 && bytes + liveBytes(s) > o.maxMergedBytes)) break;
        group.push(s.name);
        bytes += liveBytes(s);
      }
      if (group.length < 2) break;
      out.push(group);
    }
  }
  return out;
}

/** A segment as a forced merge plans it: its manifest entry and the bytes a merge holds of it while it runs. */
export interface ForcedMergeSegment extends ManifestSegment {
  /** Its term and surface dictionary, decompressed (SegmentCore.dictionaryBytes). */
  dictionaryBytes: number;
}

export interface ForcedMergeLimits {
  /** Segments a merge reads at once (≥ 2). */
  maxSources: number;
  /** The last merge reads every segment left, up to `LAST_MERGE_FAN_IN` times `maxSources`, when their dictionaries take at most this. */
  maxDictionaryBytes: number;
}

/**
 * How many times `maxSources` the last merge of a forced merge may read when their dictionaries allow it:
 * a merge walks the union of its sources' terms, looking at each source's next term for every one.
 */
const LAST_MERGE_FAN_IN = 4;

/**
 * The next group a forced merge down to `maxSegments` merges, or undefined when no more than that many
 * are left. A merge holds every source's term dictionary while it runs, so it reads at most `maxSources`
 * segments at once: more are merged in rounds of `maxSources`, the smallest first, and the round before
 * the last only as large as it must be for the last to take `maxSources` (the fewest documents written
 * twice). The last merge may read more when their dictionaries are small enough together
 * (`maxDictionaryBytes`): then no document is written twice.
 */
export function nextForcedMerge(segments: readonly ForcedMergeSegment[], maxSegments: number, limits: ForcedMergeLimits): string[] | undefined {
  const n = segments.length;
  if (n <= maxSegments) return undefined;
  const fanIn = Math.max(2, limits.maxSources);
  const smallestFirst = [...segments].sort((a, b) => liveBytes(a) - liveBytes(b));
  const last = n - maxSegments + 1; // sources of a merge that leaves maxSegments
  let dictionaries = 0;
  for (let i = 0; i < last; i++) dictionaries += smallestFirst[i]!.dictionaryBytes;
  const atOnce = last <= fanIn || (last <= LAST_MERGE_FAN_IN * fanIn && dictionaries <= limits.maxDictionaryBytes);
  const size = atOnce ? last : Math.min(fanIn, n - fanIn - maxSegments + 2);
  return smallestFirst.slice(0, size).map((s) => s.name);
}

