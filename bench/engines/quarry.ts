/**
 * Quarry itself, through its public engine surface (`src/engine/index.ts`): an index in a temporary
 * directory, every document upserted by one writer and committed once, then one searcher. cid = corpus
 * position + 1, so answers map back to positions. `snippets` chooses whether the measured search builds
 * the 20 snippets too (the peers make none, so the comparison row runs without them).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CorpusDoc } from '../dataset.js';
import { TOP_K, type BenchEngine, type SearchAnswer } from './types.js';
import { Index, type Searcher } from '../../src/engine/index.js';

/** Bytes of every file under `dir`. */
export function directoryBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    total += st.isDirectory() ? directoryBytes(p) : st.size;
  }
  return total;
}

/** An index over `docs` in a fresh temporary directory, committed once, with its searcher. */
export async function buildQuarry(docs: readonly CorpusDoc[]): Promise<{ index: Index; searcher: Searcher; dir: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-'));
  const index = await Index.open(dir);
  const writer = await index.openWriter();
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    writer.upsert(d.url === undefined
      ? { cid: BigInt(i + 1), title: d.title, text: d.text }
      : { cid: BigInt(i + 1), title: d.title, text: d.text, url: d.url, host: new URL(d.url).hostname });
  }
  await writer.commit();
  await writer.close();
  await index.refresh();
  return {
    index, dir, searcher: index.searcher(),
    async close() {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function create(options: { snippets?: boolean } = {}): BenchEngine {
  const snippets = options.snippets ?? false;
  let built: Awaited<ReturnType<typeof buildQuarry>> | undefined;
  return {
    name: snippets ? 'quarry+snippets' : 'quarry',
    method: `Quarry, one writer, upsert every document (title, text, url), one commit; search(q, {pageSize: 20, snippets: ${snippets}}), total = its exact total; bytes = every file of the index directory`,
    async build(docs: readonly CorpusDoc[]) {
      built = await buildQuarry(docs);
    },
    search(q: string): SearchAnswer {
      const r = built!.searcher.search(q, { pageSize: TOP_K, snippets });
      return { top: r.hits.map((h) => Number(h.cid) - 1), total: r.total };
    },
    async bytes() { return directoryBytes(built!.dir); },
    async close() { await built?.close(); },
  };
}
