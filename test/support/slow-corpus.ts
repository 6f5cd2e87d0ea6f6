/**
 * A synthetic index on which one valid query costs seconds: every document is runs of 199 `zeta` and one
 * `omega`, and the query is the phrase of 200 `zeta`s, which no document holds. Checking a phrase of
 * length L at each position of such a run costs up to L steps, and the query runs three times (exact,
 * phrases alone, relaxed), so the cost grows with L² per run while indexing grows with L: 400 documents
 * index in about a second and take about 5 s to search on a 2-core machine of 2026 (without a budget).
 */
import { Index } from '../../src/engine/index.js';

const PHRASE_LENGTH = 200;
const RUNS_PER_DOC = 20;

/** The expensive query (1,001 bytes, under the 1,024-byte limit). */
export const SLOW_QUERY = `"${Array(PHRASE_LENGTH).fill('zeta').join(' ')}"`;

/** Writes `docs` documents (cids 1…docs) into the index at `dir` and commits. */
export async function writeSlowCorpus(dir: string, docs = 400): Promise<void> {
  const run = `${Array(PHRASE_LENGTH - 1).fill('zeta').join(' ')} omega `;
  const text = run.repeat(RUNS_PER_DOC);
  const index = await Index.open(dir);
  try {
    const writer = await index.openWriter();
    for (let i = 1; i <= docs; i++) writer.upsert({ cid: BigInt(i), title: `zeta ${i}`, text });
    await writer.commit();
    await writer.close();
  } finally {
    await index.close();
  }
}
