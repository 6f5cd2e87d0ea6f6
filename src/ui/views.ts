/**
 * The views of the search and document pages, as element trees (./vnode.ts): rendered to HTML by the
 * server for the first paint and for browsers without JavaScript, and to DOM nodes by web/search.ts when
 * the page updates itself. One description, so both faces of a page look and read the same.
 */
import { displayHost, highlightRuns, isWebUrl, queryTerms } from './highlight.js';
import { h, type VNode } from './vnode.js';

export type UiScope = 'own' | 'web' | 'trusted';
export const UI_SCOPES: readonly UiScope[] = ['own', 'web', 'trusted'];
export const SCOPE_LABELS: Record<UiScope, string> = { own: 'Quarry docs', web: 'Web', trusted: 'Trusted' };
export const PAGE_SIZE = 20;

export interface SearchResult {
  cid: string; score: number; title: string; snippet?: string; url?: string; host?: string;
}
export interface SearchAnswer {
  query: string; scope: UiScope; page: number; total: number; nresults: number;
  results: SearchResult[]; phrase_exact?: boolean; did_you_mean?: string;
}
export interface DocAnswer { cid: string; url?: string; title: string; truncated: boolean; text: string }
/** What went wrong, in the API's terms (`code`) plus its sentence. */
export interface Problem { status: number; code: string; message: string }

export function parseScope(s: string | null | undefined): UiScope {
  return s === 'web' || s === 'trusted' ? s : 'own';
}

/** The page's own address for a search: `/search?q=…[&scope=…][&page=…]` (the page is 1-based here). */
export function searchHref(q: string, scope: UiScope, page = 0): string {
  const p = new URLSearchParams({ q });
  if (scope !== 'own') p.set('scope', scope);
  if (page > 0) p.set('page', String(page + 1));
  return `/search?${p.toString()}`;
}

/** The 0-based API page from the 1-based `page` of the address; anything odd is the first page. */
export function parsePage(s: string | null | undefined): number {
  const n = Number(s);
  return Number.isInteger(n) && n >= 1 && n <= 500 ? n - 1 : 0;
}

export function docHref(scope: UiScope, cid: string, q: string): string {
  return `/doc/${scope}/${cid}${q ? `?q=${encodeURIComponent(q)}` : ''}`;
}

/** `text` with the query's terms in `<mark>`; each hit gets `id="hit-N"` when `ids` is set. */
export function highlighted(text: string, q: string, ids = false): VNode[] {
  let n = 0;
  return highlightRuns(text, queryTerms(q)).map((r) => (r.hit ? h('mark', ids ? { id: `hit-${n++}` } : {}, r.text) : r.text));
}

export function scopeTabs(q: string, scope: UiScope): VNode {
  return h('nav', { class: 'tabs', 'aria-label': 'Corpus' },
    h('ul', {}, UI_SCOPES.map((s) => h('li', {},
      h('a', { href: q ? searchHref(q, s) : `/${s === 'own' ? '' : `?scope=${s}`}`, 'data-scope': s, 'aria-current': s === scope ? 'page' : undefined }, SCOPE_LABELS[s])))));
}

function countText(a: SearchAnswer): string {
  if (a.total === 0) return `No results for “${a.query}”.`;
  const first = a.page * PAGE_SIZE + 1;
  const last = a.page * PAGE_SIZE + a.nresults;
  const n = a.total.toLocaleString('en-US');
  if (a.nresults === 0) return `${n} result${a.total === 1 ? '' : 's'}; this page is past the last one.`;
  return `${n} result${a.total === 1 ? '' : 's'} · showing ${first}–${last}`;
}

function resultItem(r: SearchResult, a: SearchAnswer): VNode {
  const url = r.url && isWebUrl(r.url) ? r.url : undefined;
  return h('li', { class: 'result' },
    h('h2', {}, h('a', { href: docHref(a.scope, r.cid, a.query) }, r.title || '(untitled)')),
    r.url ? h('p', { class: 'url' },
      h('span', { class: 'host' }, r.host ?? displayHost(r.url)), ' ',
      url ? h('a', { href: url, rel: 'noopener noreferrer nofollow', class: 'ext' }, r.url) : h('span', {}, r.url)) : null,
    r.snippet ? h('p', { class: 'snippet' }, highlighted(r.snippet, a.query)) : null,
    h('p', { class: 'score' }, `BM25 score ${r.score.toLocaleString('en-US')}`));
}

/** Status line, notices, results and pager of one answer. */
export function resultsView(a: SearchAnswer): VNode[] {
  const pages = Math.ceil(a.total / PAGE_SIZE);
  const maxPages = Math.min(pages, 500);
  const notices: VNode[] = [];
  if (a.did_you_mean) {
    notices.push(h('p', { class: 'notice', id: 'did-you-mean' }, 'Did you mean ',
      h('a', { href: searchHref(a.did_you_mean, a.scope) }, a.did_you_mean), '?'));
  }
  if (a.phrase_exact === false) {
    notices.push(h('p', { class: 'notice', id: 'phrase-relaxed' },
      'No document holds your quoted phrase word for word, so these results hold its words in any order.'));
  }
  const empty = a.total === 0
    ? h('div', { class: 'empty' },
      h('p', {}, 'Nothing matched. You can:'),
      h('ul', {},
        h('li', {}, 'check the spelling, or use fewer or more general words;'),
        h('li', {}, 'drop a ', h('code', {}, '+'), ' or ', h('code', {}, '"quotes"'), ' that make the query strict;'),
        h('li', {}, 'search another corpus: ', UI_SCOPES.filter((s) => s !== a.scope).map((s, i) => [i ? ', ' : '', h('a', { href: searchHref(a.query, s) }, SCOPE_LABELS[s])]).flat(), '.')))
    : null;
  return [
    h('p', { id: 'count', class: 'count' }, countText(a)),
    ...notices,
    empty,
    a.results.length ? h('ol', { id: 'results', class: 'results', start: a.page * PAGE_SIZE + 1 }, a.results.map((r) => resultItem(r, a))) : null,
    pages > 1 ? h('nav', { class: 'pager', 'aria-label': 'Result pages' },
      a.page > 0 ? h('a', { href: searchHref(a.query, a.scope, a.page - 1), rel: 'prev' }, '← Previous') : h('span', {}),
      h('span', {}, `Page ${a.page + 1} of ${maxPages}`),
      a.page + 1 < maxPages ? h('a', { href: searchHref(a.query, a.scope, a.page + 1), rel: 'next' }, 'Next →') : h('span', {})) : null,
  ];
}

/** What to do about a problem, in a sentence a reader can act on. */
export function problemView(p: Problem, scope: UiScope = 'own'): VNode[] {
  let advice: VNode[];
  switch (p.code) {
    case 'unavailable': advice = ['The index is still being built or the server is restarting. Wait a few seconds and search again.']; break;
    case 'unauthenticated': advice = ['This server needs you to be signed in to search. ', h('a', { href: '/login' }, 'Log in'), ', then search again.']; break;
    case 'forbidden': advice = ['Your capability does not include searching. Ask an administrator for the right ', h('code', {}, 'search'), '.']; break;
    case 'bad_query': advice = ['Change the query: the ', h('a', { href: '#help' }, 'query language help'), ' lists what it accepts.']; break;
    case 'not_found': advice = ['The document may have been removed or re-indexed. ', h('a', { href: scope === 'own' ? '/' : `/?scope=${scope}` }, 'Search again'), '.']; break;
    case 'rate_limited': advice = ['Too many requests; wait a moment and try again.']; break;
    case 'network': advice = ['Check your connection and that the Quarry server is running, then try again.']; break;
    default: advice = ['Try again; if it keeps failing, the server log says why.'];
  }
  return [h('div', { class: 'problem', role: 'alert' }, h('p', {}, h('strong', {}, p.message)), h('p', {}, advice))];
}

/** The query language, one click away from the search box. */
export function helpView(): VNode {
  const row = (syntax: string, meaning: string) => h('tr', {}, h('td', {}, h('code', {}, syntax)), h('td', {}, meaning));
  return h('details', { class: 'help', id: 'help' },
    h('summary', {}, 'Query language'),
    h('table', {},
      h('caption', { class: 'visually-hidden' }, 'Query syntax'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Write'), h('th', { scope: 'col' }, 'to find'))),
      h('tbody', {},
        row('granite basalt', 'documents with either word (more of them ranks higher)'),
        row('+granite basalt', 'documents that must hold granite'),
        row('granite -basalt', 'documents with granite but without basalt'),
        row('"commit manifest"', 'the words next to each other, in this order'),
        row('site:example.com', 'pages on example.com or its subdomains'))),
    h('p', {}, 'Words are matched by their stem (walking finds walk). ', h('a', { href: '/api/openapi.json' }, 'The API'), ' takes the same queries.'));
}

/** The document view: title, URL, the text with hits marked and a jump to the first. */
export function docView(d: DocAnswer, scope: UiScope, q: string): VNode[] {
  const body = highlighted(d.text, q, true);
  const hits = body.filter((n) => typeof n === 'object' && n !== null).length;
  const url = d.url && isWebUrl(d.url) ? d.url : undefined;
  return [
    h('h1', { id: 'doc-title' }, d.title || '(untitled)'),
    d.url ? h('p', { class: 'url' }, url ? h('a', { href: url, rel: 'noopener noreferrer nofollow' }, d.url) : h('span', {}, d.url)) : null,
    h('p', { class: 'doc-meta' },
      `${SCOPE_LABELS[scope]} · cid ${d.cid}`,
      q ? [' · ', hits > 0 ? h('a', { href: '#hit-0', id: 'jump' }, `Jump to the first of ${hits} hit${hits === 1 ? '' : 's'} for “${q}”`) : `No hit for “${q}” in the text`] : null,
      q ? [' · ', h('a', { href: searchHref(q, scope) }, 'Back to the results')] : null),
    d.truncated ? h('p', { class: 'notice', id: 'truncated' }, 'This document is longer than 1 MiB; only its first 1 MiB is shown.') : null,
    h('div', { id: 'flag', class: 'flag' }),
    h('pre', { class: 'doc-text', id: 'doc-text', tabindex: 0 }, body),
  ];
}
