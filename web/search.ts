/**
 * The search and document pages' script. The server renders both pages in full (src/ui/pages.ts); this
 * script makes them live over the REST API with the tab's capability: searching without a reload (the
 * query, corpus and page kept in the address, so back/forward and shared links work), completions from
 * `/api/suggest` as an ARIA combobox, and on the document page the "flag as trusted" control.
 */
import {
  docView, parsePage, parseScope, problemView, resultsView, scopeTabs, searchHref,
  type DocAnswer, type SearchAnswer, type UiScope,
} from '../src/ui/views.js';
import { h } from '../src/ui/vnode.js';
import { api, ApiError, can, capability, showSession } from './common.js';
import { render } from './dom.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T | null;

// ───────────────────────────── search page ─────────────────────────────

let current: AbortController | undefined;

function apiSearchPath(q: string, scope: UiScope, page: number): string {
  const p = new URLSearchParams({ q });
  if (scope !== 'own') p.set('scope', scope);
  if (page > 0) p.set('page', String(page));
  return `/api/search?${p.toString()}`;
}

/** Runs the search the address names and renders it; announces the count in the live region. */
async function runSearch(focusResults = false): Promise<void> {
  const url = new URL(location.href);
  const q = (url.searchParams.get('q') ?? '').trim();
  const scope = parseScope(url.searchParams.get('scope'));
  const page = parsePage(url.searchParams.get('page'));
  const area = $('results-area')!;
  const input = $<HTMLInputElement>('q')!;
  if (input.value.trim() !== q) input.value = q;
  syncScope(q, scope);
  document.title = q ? `${q} — Quarry search` : 'Quarry search';
  current?.abort();
  if (q === '') {
    area.replaceChildren();
    area.dataset.state = 'empty';
    return;
  }
  const ac = new AbortController();
  current = ac;
  area.setAttribute('aria-busy', 'true');
  try {
    const a = await api<SearchAnswer>(apiSearchPath(q, scope, page), { signal: ac.signal });
    render(area, resultsView(a));
    area.dataset.state = 'ok';
    announce($('count')?.textContent ?? '');
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
    const p = err instanceof ApiError ? err : new ApiError(0, 'internal', String(err));
    render(area, problemView(p, scope));
    area.dataset.state = 'problem';
    announce(p.message);
  } finally {
    if (current === ac) area.removeAttribute('aria-busy');
  }
  if (focusResults) (area.querySelector<HTMLElement>('#results a') ?? area.querySelector<HTMLElement>('.problem a'))?.focus();
}

function announce(text: string): void {
  const live = $('live');
  if (live) live.textContent = text;
}

/** The tabs and the form's hidden scope follow the address. */
function syncScope(q: string, scope: UiScope): void {
  const form = $<HTMLFormElement>('search-form')!;
  const tabs = document.querySelector('nav.tabs');
  if (tabs) tabs.replaceWith(toNode(scopeTabs(q, scope)));
  let hidden = form.querySelector<HTMLInputElement>('input[name="scope"]');
  if (scope === 'own') hidden?.remove();
  else {
    if (!hidden) {
      hidden = document.createElement('input');
      hidden.type = 'hidden';
      hidden.name = 'scope';
      form.append(hidden);
    }
    hidden.value = scope;
  }
}

function toNode(v: Parameters<typeof render>[1]): Node {
  const holder = document.createElement('div');
  render(holder, v);
  return holder.firstChild!;
}

function navigate(href: string, focusResults = false): void {
  history.pushState(null, '', href);
  void runSearch(focusResults);
}

function setupSearch(): void {
  const form = $<HTMLFormElement>('search-form')!;
  const input = $<HTMLInputElement>('q')!;
  const list = $<HTMLUListElement>('suggestions')!;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    closeList();
    const q = input.value.trim();
    if (q === '') return;
    navigate(searchHref(q, parseScope(new URL(location.href).searchParams.get('scope'))));
  });
  // Links inside the page that lead to another search (tabs, pager, did-you-mean) are followed in place.
  document.addEventListener('click', (e) => {
    const a = (e.target as Element).closest?.('a');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const href = a.getAttribute('href') ?? '';
    if (!href.startsWith('/search?') && !href.startsWith('/?') && href !== '/') return;
    e.preventDefault();
    // The pager and did-you-mean links are replaced by the new results: the focus moves to the first result.
    navigate(href, a.closest('.pager, #did-you-mean') !== null);
  });
  window.addEventListener('popstate', () => void runSearch());

  // Completions: the last word of the box completed from the corpus's terms.
  let active = -1;
  let items: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending: AbortController | undefined;
  const closeList = () => {
    list.hidden = true;
    list.replaceChildren();
    items = [];
    active = -1;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  };
  const choose = (i: number) => {
    const word = items[i];
    if (word === undefined) return;
    input.value = input.value.replace(/[^\s"+-]*$/, word) + ' ';
    closeList();
    input.focus();
  };
  const highlight = (i: number) => {
    active = i;
    list.querySelectorAll('li').forEach((li, n) => li.setAttribute('aria-selected', String(n === i)));
    if (i >= 0) input.setAttribute('aria-activedescendant', `sugg-${i}`);
    else input.removeAttribute('aria-activedescendant');
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value;
    if (!/[\p{L}\p{N}]$/u.test(q)) { closeList(); return; }
    timer = setTimeout(() => {
      pending?.abort();
      const ac = new AbortController();
      pending = ac;
      const scope = parseScope(new URL(location.href).searchParams.get('scope'));
      const p = new URLSearchParams({ q });
      if (scope !== 'own') p.set('scope', scope);
      api<{ suggestions: string[] }>(`/api/suggest?${p.toString()}`, { signal: ac.signal }).then((r) => {
        if (input.value !== q) return;
        items = r.suggestions;
        if (items.length === 0) { closeList(); return; }
        render(list, items.map((s, i) => h('li', { id: `sugg-${i}`, role: 'option', 'aria-selected': 'false' }, s)));
        list.hidden = false;
        active = -1;
        input.setAttribute('aria-expanded', 'true');
      }, () => { /* a failed completion is not worth an error: the search itself will say */ });
    }, 120);
  });
  input.addEventListener('keydown', (e) => {
    if (list.hidden) return;
    if (e.key === 'ArrowDown') { e.preventDefault(); highlight((active + 1) % items.length); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); highlight(active <= 0 ? items.length - 1 : active - 1); }
    else if (e.key === 'Escape') { e.preventDefault(); closeList(); }
    else if (e.key === 'Enter' && active >= 0) { e.preventDefault(); choose(active); }
  });
  list.addEventListener('mousedown', (e) => e.preventDefault()); // keep the focus in the box
  list.addEventListener('click', (e) => {
    const li = (e.target as Element).closest('li');
    if (li) choose(Number(li.id.slice('sugg-'.length)));
  });
  input.addEventListener('blur', () => closeList());

  // The server rendered the page already; search again only when it could not (e.g. it needed the capability).
  const area = $('results-area')!;
  if (area.dataset.state === 'problem' && capability() !== null) void runSearch();
}

// ───────────────────────────── document page ─────────────────────────────

async function setupDoc(): Promise<void> {
  const article = $('doc')!;
  const scope = parseScope(article.dataset.scope);
  const cid = article.dataset.cid ?? '';
  const q = article.dataset.q ?? '';
  if (article.dataset.state === 'problem' && capability() !== null) {
    try {
      const p = new URLSearchParams({ cid });
      if (scope !== 'own') p.set('scope', scope);
      const d = await api<DocAnswer>(`/api/doc?${p.toString()}`);
      render(article, docView(d, scope, q));
      article.dataset.state = 'ok';
      document.title = `${d.title || '(untitled)'} — Quarry`;
    } catch (err) {
      if (err instanceof ApiError) render(article, [h('h1', {}, 'Document'), ...problemView(err, scope)]);
      return;
    }
  }
  const me = await showSession();
  const slot = $('flag');
  if (!slot || !can(me, 'trusted.flag')) return;
  const url = article.querySelector<HTMLAnchorElement>('.url a')?.href;
  render(slot, [
    h('button', { type: 'button', id: 'flag-button', class: 'secondary' }, 'Flag as trusted'),
    h('span', { id: 'flag-msg', class: 'msg', role: 'status' }),
  ]);
  $('flag-button')!.addEventListener('click', () => {
    const msg = $('flag-msg')!;
    msg.className = 'msg';
    msg.textContent = 'Flagging…';
    api('/api/trusted', { method: 'POST', body: url ? { url } : { cid } }).then(() => {
      msg.className = 'msg ok';
      msg.textContent = 'Flagged: the page is now one of the trusted references.';
    }, (err: ApiError) => {
      msg.className = 'msg error';
      msg.textContent = err.status === 404 && err.code === 'not_found'
        ? 'This server cannot flag references yet (POST /api/trusted answered 404 not_found).'
        : `Could not flag it: ${err.message}`;
    });
  });
}

if (document.body.dataset.page === 'doc') void setupDoc();
else {
  setupSearch();
  void showSession();
}
