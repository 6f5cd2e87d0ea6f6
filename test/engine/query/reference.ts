/**
 * The reference evaluator: CONTRACT §2's query semantics and docs/ranking.md's arithmetic applied by brute
 * force to every live stored document, with nothing shared with the engine but the analyzer and the
 * parser (tested on their own). The property test checks the engine against it: same documents, same
 * integer scores, same order, same total, same phraseExact.
 */
import { analyze } from '../../../src/engine/analysis/analyzer.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { parseQuery, type Clause } from '../../../src/engine/query/parser.js';

interface RefDoc {
  doc: StoredDocument;
  tf: Map<string, number>;
  dl: number;
  fields: string[][]; // stemmed terms of the title and of the text, each in position order
  hosts: Set<string>;
}

export interface RefResult {
  total: number;
  hits: { cid: bigint; score: number }[];
  phraseExact?: boolean;
}

type Item =
  | { kind: 'term'; occur: Clause['occur']; term: string }
  | { kind: 'phrase'; occur: Clause['occur']; terms: string[] }
  | { kind: 'site'; occur: Clause['occur']; host: string };

function prepare(doc: StoredDocument): RefDoc {
  const title = analyze(doc.title).map((t) => t.term);
  const text = analyze(doc.text).map((t) => t.term);
  const tf = new Map<string, number>();
  for (const t of [...title, ...text]) tf.set(t, (tf.get(t) ?? 0) + 1);
  const hosts = new Set<string>();
  if (doc.host) {
    const labels = doc.host.toLowerCase().split('.').filter((l) => l !== '');
    for (let i = 0; i < labels.length; i++) hosts.add(labels.slice(i).join('.'));
  }
  return { doc, tf, dl: title.length + text.length, fields: [title, text], hosts };
}

function phraseIn(d: RefDoc, terms: string[]): boolean {
  return d.fields.some((f) => {
    for (let p = 0; p + terms.length <= f.length; p++) if (terms.every((t, i) => f[p + i] === t)) return true;
    return false;
  });
}

function itemMatches(d: RefDoc, it: Item): boolean {
  if (it.kind === 'term') return d.tf.has(it.term);
  if (it.kind === 'phrase') return phraseIn(d, it.terms);
  return d.hosts.has(it.host);
}

const itemTerms = (it: Item): string[] => (it.kind === 'term' ? [it.term] : it.kind === 'phrase' ? it.terms : []);
const key = (it: Item) => `${it.kind} ${itemTerms(it).join(' ')}${it.kind === 'site' ? it.host : ''}`;

/** docs/ranking.md "Common terms": the df/N fraction above which a term is common. */
export const REFERENCE_COMMON_RATIO = 0.3;

function run(docs: RefDoc[], items: Item[], commonRatio: number): { cid: bigint; score: number }[] {
  const scoring = items.filter((i) => i.kind !== 'site');
  const must = scoring.filter((i) => i.occur === 'must');
  const should = scoring.filter((i) => i.occur === 'should');
  const sites = items.filter((i) => i.kind === 'site');
  // CONTRACT §2: with no + term or phrase, a document must match an optional term or phrase; with
  // neither, nothing matches (site: filters alone included)
  if (must.length === 0 && should.length === 0) return [];

  const N = docs.length;
  let lenSum = 0;
  for (const d of docs) lenSum += d.dl;
  const avgdl = N > 0 && lenSum > 0 ? lenSum / N : 1;
  const A = 1.2 * (1 - 0.75);
  const Bn = (1.2 * 0.75) / avgdl;
  const dfs = new Map<string, number>(); // memo only: long queries would recount a term once per document
  const dfOf = (term: string) => {
    let df = dfs.get(term);
    if (df !== undefined) return df;
    df = 0;
    for (const d of docs) if (d.tf.has(term)) df++;
    dfs.set(term, df);
    return df;
  };
  const weightOf = (term: string) => {
    const df = dfOf(term);
    return 1000 * Math.log(1 + (N - df + 0.5) / (df + 0.5)) * (1.2 + 1);
  };
  // Common terms: with nothing required, a rare optional term (0 < df ≤ ratio·N) and a common one
  // (df > ratio·N), the common optional terms stop matching documents by themselves and only score.
  const isCommon = (i: Item) => i.kind === 'term' && dfOf(i.term) > commonRatio * N;
  const rareTerm = should.some((i) => i.kind === 'term' && dfOf(i.term) > 0 && !isCommon(i));
  const ruleApplies = must.length === 0 && rareTerm && should.some(isCommon);
  const matching = ruleApplies ? should.filter((i) => !isCommon(i)) : should;

  const out: { cid: bigint; score: number }[] = [];
  for (const d of docs) {
    if (!items.filter((i) => i.occur === 'must').every((i) => itemMatches(d, i))) continue;
    if (items.some((i) => i.occur === 'mustNot' && itemMatches(d, i))) continue;
    const optSites = sites.filter((i) => i.occur === 'should');
    if (optSites.length > 0 && !optSites.some((i) => itemMatches(d, i))) continue;
    if (must.length === 0 && !matching.some((i) => itemMatches(d, i))) continue;
    const matchedShould = should.filter((i) => itemMatches(d, i));
    const terms = new Set<string>();
    for (const i of [...must, ...matchedShould]) for (const t of itemTerms(i)) terms.add(t);
    let score = 0;
    for (const t of terms) {
      const tf = d.tf.get(t)!;
      score += Math.round((weightOf(t) * tf) / (tf + (A + Bn * d.dl)));
    }
    out.push({ cid: d.doc.cid, score });
  }
  return out.sort((a, b) => b.score - a.score || (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
}

/** Every match of `q` over `liveDocs`, best first. */
export function referenceSearch(liveDocs: StoredDocument[], q: string, commonRatio = REFERENCE_COMMON_RATIO): RefResult {
  const parsed = parseQuery(q);
  const items: Item[] = [];
  for (const c of parsed.clauses) {
    if (c.kind === 'term') for (const term of c.terms) items.push({ kind: 'term', occur: c.occur, term });
    else if (c.kind === 'phrase') items.push({ kind: 'phrase', occur: c.occur, terms: c.terms });
    else items.push({ kind: 'site', occur: c.occur, host: c.host });
  }
  const docs = liveDocs.map(prepare);
  const hits = run(docs, items, commonRatio);
  if (!parsed.hasPhrase) return { total: hits.length, hits };
  // required phrases: the `+` ones, and the only distinct optional term-or-phrase when nothing is `+`
  const scoring = items.filter((i) => i.kind !== 'site');
  const required: Item[] = scoring.filter((i) => i.kind === 'phrase' && i.occur === 'must');
  const hasMust = scoring.some((i) => i.occur === 'must');
  const optional = [...new Map(scoring.filter((i) => i.occur === 'should').map((i) => [key(i), i])).values()];
  if (!hasMust && optional.length === 1 && optional[0]!.kind === 'phrase') required.push(optional[0]!);
  if (hits.length > 0 || required.length === 0) return { total: hits.length, hits, phraseExact: true };
  if (docs.some((d) => required.every((p) => itemMatches(d, p)))) return { total: 0, hits, phraseExact: true };
  const relaxed: Item[] = [];
  for (const i of items) {
    if (required.includes(i)) for (const term of itemTerms(i)) relaxed.push({ kind: 'term', occur: 'must', term });
    else relaxed.push(i);
  }
  const rh = run(docs, relaxed, commonRatio);
  return { total: rh.length, hits: rh, phraseExact: false };
}
