/**
 * Test collections for the evaluation and the benchmarks: the BEIR layout (`corpus.jsonl`,
 * `queries.jsonl`, `qrels/test.tsv`) or a bare JSONL corpus (one `{title, text, url?, _id?}` per line),
 * and the one rule for turning a collection's query text into a Quarry query.
 *
 * Query text: BEIR queries are natural-language sentences that contain characters Quarry's query language
 * reads as operators (`-` excludes, `+` requires, `"` opens a phrase, `site:` filters). Fed as written,
 * "0-dimensional biomaterials…" would exclude "dimensional". The collections' queries mean a bag of
 * words, so `plainQuery` replaces every run of characters that are not letters, digits or combining
 * marks with one space: every query becomes a plain OR of its words, the form BM25 baselines (Anserini,
 * Xapian, FTS5) evaluate. Every engine in the benchmarks receives this same text.
 */
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface CorpusDoc { id: string; title: string; text: string; url?: string }
export interface Query { id: string; text: string }
/** query id → (doc id → graded relevance); only rows with relevance > 0 are kept. */
export type Qrels = Map<string, Map<string, number>>;

export interface Collection {
  name: string;
  docs: CorpusDoc[];
  /** Every query of the collection (the speed benchmarks run them all). */
  queries: Query[];
  /** Judgments of the test split; empty for a bare corpus. */
  qrels: Qrels;
}

/** The repository's root (bench/..). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `../shared/data/scifact` beside the repository, when it is there (developers' machines). */
export function defaultCollectionPath(name = 'scifact'): string | undefined {
  const p = resolve(REPO_ROOT, '..', 'shared', 'data', name);
  return existsSync(join(p, 'corpus.jsonl')) ? p : undefined;
}

/** Every query becomes a plain OR of its words (see the header). */
export function plainQuery(text: string): string {
  return text.replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ').trim();
}

/** Streams the objects of a JSONL file; malformed lines are counted and skipped. */
export async function* readJsonl(path: string): AsyncGenerator<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as Record<string, unknown>;
    } catch {
      process.stderr.write(`${path}:${lineNo}: malformed JSON line skipped\n`);
    }
  }
}

/** Loads a BEIR-layout directory or a bare `.jsonl` corpus (documents only; no queries or qrels). */
export async function loadCollection(path: string, options: { maxDocs?: number } = {}): Promise<Collection> {
  const dir = statSync(path).isDirectory();
  const corpusPath = dir ? join(path, 'corpus.jsonl') : path;
  const docs: CorpusDoc[] = [];
  for await (const o of readJsonl(corpusPath)) {
    if (options.maxDocs !== undefined && docs.length >= options.maxDocs) break;
    const title = typeof o.title === 'string' ? o.title : '';
    const text = typeof o.text === 'string' ? o.text : '';
    const id = typeof o._id === 'string' ? o._id : typeof o._id === 'number' ? String(o._id) : String(docs.length);
    const doc: CorpusDoc = { id, title, text };
    if (typeof o.url === 'string') doc.url = o.url;
    docs.push(doc);
  }
  const queries: Query[] = [];
  const qrels: Qrels = new Map();
  if (dir && existsSync(join(path, 'queries.jsonl'))) {
    for await (const o of readJsonl(join(path, 'queries.jsonl'))) {
      if (typeof o.text === 'string') queries.push({ id: String(o._id), text: o.text });
    }
  }
  if (dir && existsSync(join(path, 'qrels', 'test.tsv'))) parseQrels(readFileSync(join(path, 'qrels', 'test.tsv'), 'utf8'), qrels);
  const name = dir ? path.replace(/\/+$/, '').split('/').pop()! : path.split('/').pop()!.replace(/\.jsonl$/, '');
  return { name, docs, queries, qrels };
}

/** BEIR qrels TSV (`query-id  corpus-id  score`, optional header) into `into`; score ≤ 0 rows dropped. */
export function parseQrels(tsv: string, into: Qrels = new Map()): Qrels {
  for (const line of tsv.split(/\r?\n/)) {
    const cols = line.split('\t');
    if (cols.length < 3 || cols[0] === 'query-id') continue;
    const rel = Number(cols[2]);
    if (!Number.isFinite(rel) || rel <= 0) continue;
    let m = into.get(cols[0]!);
    if (!m) into.set(cols[0]!, (m = new Map()));
    m.set(cols[1]!, rel);
  }
  return into;
}

/** The queries that have judgments, in file order (the evaluation set). */
export function judgedQueries(c: Collection): Query[] {
  return c.queries.filter((q) => c.qrels.has(q.id));
}
