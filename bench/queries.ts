/**
 * Seeded query sets for corpora without their own queries: each query is 1–3 words taken from a random
 * stretch of a random document, so query words follow the corpus's own frequency distribution (common
 * words are drawn often, as in real queries) and every query matches at least one document. Words are
 * the analyzer's surface forms of 3+ letters (numbers and fragments like "s" make poor queries).
 */
import { analyzeSurfaces } from '../src/engine/analysis/analyzer.js';
import type { CorpusDoc } from './dataset.js';
import { seededRandom } from './measure.js';

export function seededQueries(docs: readonly CorpusDoc[], count: number, seed: number): { id: string; q: string }[] {
  const random = seededRandom(seed);
  const out: { id: string; q: string }[] = [];
  if (docs.length === 0) return out;
  let attempts = 0;
  while (out.length < count && attempts++ < count * 50) {
    const d = docs[Math.floor(random() * docs.length)]!;
    // a stretch of at most 2,000 characters keeps long documents cheap to sample
    const text = `${d.title} ${d.text}`;
    const from = Math.floor(random() * Math.max(1, text.length - 2000));
    const words = analyzeSurfaces(text.slice(from, from + 2000)).filter((w) => w.length >= 3 && /^\p{L}+$/u.test(w));
    if (words.length === 0) continue;
    const n = 1 + Math.floor(random() * 3);
    const picked = new Set<string>();
    for (let k = 0; k < n * 4 && picked.size < n; k++) picked.add(words[Math.floor(random() * words.length)]!);
    out.push({ id: `g${out.length + 1}`, q: [...picked].join(' ') });
  }
  return out;
}
