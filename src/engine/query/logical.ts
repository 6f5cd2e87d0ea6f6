/**
 * The logical query: the parsed clauses regrouped by occur, multi-token words split into terms, `site:`
 * clauses apart (they filter, never score), duplicates merged. This is the "Query" of STYLE §2: a recipe
 * that knows nothing of any snapshot; `executor.ts` binds it to one (the Weight) and walks segments.
 *
 * Semantics (CONTRACT §2, docs/query-language.md): a live document matches when
 *   - every `must` node and every `siteMust` host matches it,
 *   - no `mustNot` node or `siteMustNot` host matches it,
 *   - when `siteShould` is not empty, one of its hosts matches it,
 *   - when `must` is empty and `should` is not, one `should` node matches it;
 *   so a query with no `must`/`should` node — only `site:` filters and exclusions — matches nothing:
 *   `site:` restricts the results of terms and phrases, it does not produce results of its own.
 * Its score is the sum, over the distinct terms of the `must` nodes and of the `should` nodes it matches,
 * of each term's BM25 contribution.
 */
import type { ParsedQuery } from './parser.js';

export interface TermNode { kind: 'term'; term: string }
export interface PhraseNode { kind: 'phrase'; terms: string[] }
export type ScoringNode = TermNode | PhraseNode;

export interface LogicalQuery {
  must: ScoringNode[];
  should: ScoringNode[];
  mustNot: ScoringNode[];
  siteMust: string[];
  siteShould: string[];
  siteMustNot: string[];
}

const nodeKey = (n: ScoringNode) => (n.kind === 'term' ? `t ${n.term}` : `p ${n.terms.join(' ')}`);

export function toLogical(parsed: ParsedQuery): LogicalQuery {
  const q: LogicalQuery = { must: [], should: [], mustNot: [], siteMust: [], siteShould: [], siteMustNot: [] };
  for (const c of parsed.clauses) {
    if (c.kind === 'site') {
      (c.occur === 'must' ? q.siteMust : c.occur === 'mustNot' ? q.siteMustNot : q.siteShould).push(c.host);
      continue;
    }
    const list = c.occur === 'must' ? q.must : c.occur === 'mustNot' ? q.mustNot : q.should;
    if (c.kind === 'phrase') list.push({ kind: 'phrase', terms: c.terms });
    else for (const term of c.terms) list.push({ kind: 'term', term });
  }
  return dedupe(q);
}

/** Merges repeated nodes and hosts; a `should` node also required is redundant (it neither filters nor scores more). */
function dedupe(q: LogicalQuery): LogicalQuery {
  const uniq = (nodes: ScoringNode[], skip = new Set<string>()) => {
    const seen = new Set(skip);
    return nodes.filter((n) => { const k = nodeKey(n); if (seen.has(k)) return false; seen.add(k); return true; });
  };
  const must = uniq(q.must);
  const should = q.must.length > 0 ? uniq(q.should, new Set(must.map(nodeKey))) : uniq(q.should);
  return {
    must, should, mustNot: uniq(q.mustNot),
    siteMust: [...new Set(q.siteMust)], siteShould: [...new Set(q.siteShould)], siteMustNot: [...new Set(q.siteMustNot)],
  };
}

/**
 * The phrases every matching document must match: the `+` phrases, and the lone `should` phrase of a
 * query with no `must` node and no other `should` node (it must match for anything to). Phrase relaxation
 * (CONTRACT §2 `phrase_exact`) applies to these.
 */
export function requiredPhrases(q: LogicalQuery): PhraseNode[] {
  const out = q.must.filter((n): n is PhraseNode => n.kind === 'phrase');
  if (q.must.length === 0 && q.should.length === 1 && q.should[0]!.kind === 'phrase') out.push(q.should[0]!);
  return out;
}

/** The query with each required phrase replaced by its terms, all required. */
export function relaxPhrases(q: LogicalQuery): LogicalQuery {
  const required = new Set(requiredPhrases(q));
  const asTerms = (p: PhraseNode): TermNode[] => p.terms.map((term) => ({ kind: 'term', term }));
  const must: ScoringNode[] = [];
  for (const n of q.must) must.push(...(required.has(n as PhraseNode) ? asTerms(n as PhraseNode) : [n]));
  const should: ScoringNode[] = [];
  for (const n of q.should) {
    if (required.has(n as PhraseNode)) must.push(...asTerms(n as PhraseNode));
    else should.push(n);
  }
  return dedupe({ ...q, must, should });
}

/** Just the required phrases, as a query (does any live document match them all?). */
export function phrasesOnly(q: LogicalQuery): LogicalQuery {
  return { must: requiredPhrases(q), should: [], mustNot: [], siteMust: [], siteShould: [], siteMustNot: [] };
}

/** Stemmed terms a result's snippet should show: those of every node that can score. */
export function scoringTerms(q: LogicalQuery): Set<string> {
  const out = new Set<string>();
  for (const n of [...q.must, ...q.should]) for (const t of n.kind === 'term' ? [n.term] : n.terms) out.add(t);
  return out;
}
