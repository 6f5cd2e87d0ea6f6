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

/**
 * The next group a forced merge down to `maxSegments` merges, or undefined when no more than that many
 * are left. A merge holds every source's term dictionary while it runs, so it reads at most `maxSources`
 * segments at once: more are merged in rounds of `maxSources`, the smallest first, and the round before
 * the last only as large as it must be for the last to take `maxSources` (the fewest documents written twice).
 */
export function nextForcedMerge(segments: readonly ManifestSegment[], maxSegments: number, maxSources: number): string[] | undefined {
  const n = segments.length;
  if (n <= maxSegments) return undefined;
  const fanIn = Math.max(2, maxSources);
  const last = n - maxSegments + 1; // sources of a merge that leaves maxSegments
  const size = last <= fanIn ? last : Math.min(fanIn, n - fanIn - maxSegments + 2);
  return [...segments].sort((a, b) => liveBytes(a) - liveBytes(b)).slice(0, size).map((s) => s.name);
}

