/**
 * The web UI's server face: the pages a browser asks for by address. The search results page
 * (`/`, `/search?q=&scope=&page=`) and the document view (`/doc/{scope}/{cid}?q=`) are rendered here from
 * the search service, so plain search works without JavaScript; the scripts of web/ (bundled by the build
 * into dist/web/) then take over the same pages, calling the REST API with the tab's capability. The
 * console pages (`/console`, `/console/{target}`) are shells the console script fills in.
 *
 * Every value from a request or a document goes through ./vnode.ts (escaped). The pages' Content-Security-
 * Policy allows only this origin's scripts and styles: no inline script or style, nothing from elsewhere.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BytesReply, RequestContext, RouteGroup } from '../http/route.js';
import { NotFoundError, QuarryError } from '../kernel/errors.js';
import { httpError } from '../http/errors.js';
import type { SearchService } from '../search/service.js';
import {
  docView, helpView, parsePage, parseScope, problemView, resultsView, scopeTabs, SCOPE_LABELS,
  type DocAnswer, type Problem, type SearchAnswer, type UiScope,
} from './views.js';
import { h, toHtml, type VNode } from './vnode.js';

/** `dist/web`, reached from `src/ui/` (tests under tsx) as from `dist/ui/` (the built server). */
const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');

export const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** The files of dist/web/ a browser may fetch under `/ui/`, with their types. */
const ASSETS: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'search.js': 'text/javascript; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

interface Shell { title: string; script: 'search' | 'console'; page: string; main: VNode[]; status?: number }

function page(s: Shell): BytesReply {
  const html = '<!doctype html>' + toHtml(h('html', { lang: 'en' },
    h('head', {},
      h('meta', { charset: 'utf-8' }),
      h('meta', { name: 'viewport', content: 'width=device-width, initial-scale=1' }),
      h('meta', { name: 'color-scheme', content: 'light dark' }),
      h('title', {}, s.title),
      h('link', { rel: 'stylesheet', href: '/ui/app.css' }),
      h('link', { rel: 'icon', href: '/ui/icon.svg', type: 'image/svg+xml' }),
      h('script', { type: 'module', src: `/ui/${s.script}.js` })),
    h('body', { 'data-page': s.page },
      h('a', { class: 'skip', href: '#main' }, 'Skip to the content'),
      h('header', { class: 'top' },
        h('a', { class: 'brand', href: '/' }, 'Quarry'),
        h('nav', { 'aria-label': 'Sections' }, h('a', { href: '/' }, 'Search'), ' ', h('a', { href: '/console' }, 'Console')),
        h('div', { id: 'session', class: 'session' }, h('a', { href: '/login' }, 'Log in'))),
      h('main', { id: 'main', tabindex: -1 }, s.main))));
  return { status: s.status ?? 200, body: html, contentType: 'text/html; charset=utf-8', headers: PAGE_HEADERS };
}

function problemOf(err: unknown): Problem {
  const e = httpError(err);
  return { status: e.status, code: QuarryError.is(err) ? err.code : 'internal', message: (e.body as { error: { message: string } }).error.message };
}

export function uiRoutes(search: SearchService, webDir = WEB_DIR): RouteGroup {
  const assets = new Map<string, Promise<Buffer>>();

  async function searchPage(ctx: RequestContext): Promise<BytesReply> {
    const q = (ctx.query.get('q') ?? '').trim();
    const scope = parseScope(ctx.query.get('scope'));
    const pageNo = parsePage(ctx.query.get('page'));
    let area: VNode[] = [];
    let state = 'empty';
    let status = 200;
    if (q !== '') {
      try {
        const a = await search.search(ctx.principal, { q, scope: scope === 'own' ? undefined : scope, page: String(pageNo) }) as SearchAnswer;
        area = resultsView(a);
        state = 'ok';
      } catch (err) {
        const p = problemOf(err);
        area = problemView(p, scope);
        state = 'problem';
        status = p.status;
      }
    }
    return page({
      title: q ? `${q} — Quarry search` : 'Quarry search', script: 'search', page: 'search', status,
      main: [
        h('h1', { class: 'visually-hidden' }, 'Search'),
        h('form', { id: 'search-form', class: 'search', role: 'search', action: '/search', method: 'get' },
          h('label', { for: 'q', class: 'visually-hidden' }, `Search ${SCOPE_LABELS[scope]}`),
          h('div', { class: 'combo' },
            h('input', {
              id: 'q', name: 'q', type: 'search', value: q, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'none',
              placeholder: 'Search…', role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false', 'aria-controls': 'suggestions',
            }),
            h('ul', { id: 'suggestions', role: 'listbox', 'aria-label': 'Suggestions', hidden: true })),
          scope === 'own' ? null : h('input', { type: 'hidden', name: 'scope', value: scope }),
          h('button', { type: 'submit' }, 'Search')),
        scopeTabs(q, scope),
        helpView(),
        h('div', { id: 'live', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' }),
        h('section', { id: 'results-area', 'aria-label': 'Results', 'data-state': state, 'data-q': q, 'data-scope': scope, 'data-page': pageNo }, area),
      ],
    });
  }

  async function docPage(ctx: RequestContext): Promise<BytesReply> {
    const scope = ctx.params.scope;
    if (scope !== 'own' && scope !== 'web' && scope !== 'trusted') throw new NotFoundError(`No corpus ${JSON.stringify(scope)}.`);
    const cid = ctx.params.cid ?? '';
    const q = (ctx.query.get('q') ?? '').trim();
    let main: VNode[];
    let state = 'ok';
    let status = 200;
    let title = 'Document';
    try {
      const d = await search.doc(ctx.principal, { cid, scope: scope === 'own' ? undefined : scope });
      if (!d.found) throw new NotFoundError(d.error.message, 'cid');
      main = docView(d as DocAnswer, scope as UiScope, q);
      title = d.title || '(untitled)';
    } catch (err) {
      const p = problemOf(err);
      main = [h('h1', { id: 'doc-title' }, 'Document'), ...problemView(p, scope as UiScope)];
      state = 'problem';
      status = p.status;
    }
    return page({
      title: `${title} — Quarry`, script: 'search', page: 'doc', status,
      main: [h('article', { id: 'doc', 'data-state': state, 'data-scope': scope, 'data-cid': cid, 'data-q': q }, main)],
    });
  }

  function consolePage(ctx: RequestContext): BytesReply {
    const target = ctx.params.target;
    return page({
      title: target ? `${target} — Quarry console` : 'Quarry console', script: 'console', page: target ? 'target' : 'console',
      main: [
        h('h1', {}, target ? `Target ${target}` : 'Console'),
        h('div', { id: 'console', 'data-target': target ?? '' },
          h('p', {}, 'The console needs JavaScript and a capability holding ', h('code', {}, 'mgmt.read'), '. ', h('a', { href: '/login' }, 'Log in'), ' first.')),
      ],
    });
  }

  async function asset(ctx: RequestContext): Promise<BytesReply> {
    const name = ctx.params.file ?? '';
    const type = ASSETS[name];
    if (type === undefined) throw new NotFoundError(`No file ${JSON.stringify(name)}.`);
    let p = assets.get(name);
    if (!p) {
      p = readFile(join(webDir, name));
      p.catch(() => assets.delete(name)); // a failed read is retried on the next request
      assets.set(name, p);
    }
    return { body: await p, contentType: type, headers: PAGE_HEADERS };
  }

  return {
    name: 'ui',
    routes: [
      { method: 'GET', pattern: '/', handler: searchPage },
      { method: 'GET', pattern: '/search', handler: searchPage },
      { method: 'GET', pattern: '/doc/{scope}/{cid}', handler: docPage },
      { method: 'GET', pattern: '/console', handler: async (ctx) => consolePage(ctx) },
      { method: 'GET', pattern: '/console/{target}', handler: async (ctx) => consolePage(ctx) },
      { method: 'GET', pattern: '/ui/{file}', handler: asset },
    ],
  };
}
