/**
 * Measurements shared by the benchmarks: memory from the kernel's own counters (VmRSS now, VmHWM = peak
 * resident set of this process), latency percentiles by the nearest-rank rule, and a seeded PRNG so
 * generated query sets are the same on every run.
 */
import { readFileSync } from 'node:fs';

/** Resident set now and its peak, in bytes (Linux /proc; falls back to resourceUsage elsewhere). */
export function memory(): { rss: number; peak: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { rss: process.memoryUsage().rss, peak: process.resourceUsage().maxRSS * 1024 };
  }
}

/** Nearest-rank percentile (p in 0..100) of `sorted` ascending values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const MB = 1024 * 1024;
export const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
