// The web UI in real Chromium (Debian chromium driven by playwright-core) against a real `quarry serve`
// over TLS with the fixture corpus: search with completions, results, did-you-mean, paging, corpus tabs
// and back/forward; the document view; plain search with JavaScript off; hostile documents that must run
// nothing; the console — log in, build, stage, deploy with its dry-run plan and confirmation while a
// second tab watches the verdict change over the event stream, roll back; a capability without
// mgmt.deploy; and axe-core on every page (no serious or critical violation).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { connect } from '../support/client.js';
import { logIn, mintCap, startUi, uiContext, type UiServer } from './support.js';

const WAIT = { timeout: 120_000 }; // hang guards only: the machine is shared and slow
let dir: string;
let ui: UiServer;
let url: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-ui-'));
  ui = await startUi(dir);
  url = ui.srv.url;
});
after(async () => {
  await ui?.browser.close();
  await ui?.srv.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Fails the test on any dialog (alert, confirm…), page error or console error the page produces. */
function guard(page: Page): string[] {
  const problems: string[] = [];
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); void d.dismiss(); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${String(e)}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  return problems;
}

async function axe(page: Page, what: string): Promise<void> {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${what}`);
}

const count = (page: Page) => page.textContent('#count');

test('search: completions, results, paging, did-you-mean, corpus tabs, back/forward, document view', async () => {
  const context = await uiContext(ui.browser);
  const page = await context.newPage();
  const problems = guard(page);
  await page.goto(`${url}/`);
  await axe(page, 'the empty search page');

  // Completion from /api/suggest, chosen with the keyboard.
  await page.click('#q');
  await page.keyboard.type('gran');
  await page.waitForSelector('#suggestions li#sugg-0', WAIT);
  assert.equal(await page.getAttribute('#q', 'aria-expanded'), 'true');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getAttribute('#q', 'aria-activedescendant'), 'sugg-0');
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('#q'), 'granite ');
  assert.ok(await page.isHidden('#suggestions'));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /45 results/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);
  assert.equal(new URL(page.url()).searchParams.get('q'), 'granite');
  assert.match(await page.textContent('#live') ?? '', /45 results/, 'the count is announced');
  assert.equal(await page.locator('#results > li').count(), 20);
  assert.ok(await page.locator('#results mark').count() > 0, 'the query terms are highlighted');
  await axe(page, 'the results page');

  // Paging, then back and forward.
  await page.click('.pager a[rel="next"]');
  await page.waitForFunction(() => /showing 21–40/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);
  assert.equal(new URL(page.url()).searchParams.get('page'), '2');
  await page.waitForFunction(() => document.activeElement?.closest('#results') != null, undefined, WAIT); // focus follows the new page
  await page.goBack();
  await page.waitForFunction(() => /showing 1–20/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);
  await page.goForward();
  await page.waitForFunction(() => /showing 21–40/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);

  // Corpus tabs: the web corpus, with hosts; back returns to the own corpus.
  await page.click('nav.tabs a[data-scope="web"]');
  await page.waitForFunction(() => document.querySelector('nav.tabs a[aria-current="page"]')?.getAttribute('data-scope') === 'web'
    && /^3 results/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);
  assert.equal(new URL(page.url()).searchParams.get('scope'), 'web');
  assert.match(await page.textContent('#results') ?? '', /example\.com/);
  await page.goBack();
  await page.waitForFunction(() => /45 results/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);

  // Did-you-mean is a link that searches the correction.
  await page.fill('#q', 'elephnt');
  await page.press('#q', 'Enter');
  await page.waitForSelector('#did-you-mean a', WAIT);
  await page.click('#did-you-mean a');
  await page.waitForFunction(() => /^3 results/.test(document.getElementById('count')?.textContent ?? ''), undefined, WAIT);
  assert.equal(new URL(page.url()).searchParams.get('q'), 'elephant');

  // A relaxed phrase is explained; an empty answer says what to do.
  await page.fill('#q', '"brown quick"');
  await page.press('#q', 'Enter');
  await page.waitForSelector('#phrase-relaxed', WAIT);
  await page.fill('#q', '+granite +zebra');
  await page.press('#q', 'Enter');
  await page.waitForSelector('.empty', WAIT);

  // A shared link opens the same results; a result opens the document view with its hits marked.
  await page.goto(`${url}/search?q=quick+brown+fox`);
  await page.click('#results > li:first-child h2 a');
  await page.waitForSelector('#doc-text mark', WAIT);
  assert.equal(await page.textContent('#doc-title'), 'The fox');
  assert.match(await page.textContent('#jump') ?? '', /Jump to the first of 4 hits/);
  assert.ok(await page.isHidden('#flag-button'), 'anonymous: no flag control');
  await axe(page, 'the document view');
  await page.click('#jump');
  assert.equal(new URL(page.url()).hash, '#hit-0');
  assert.deepEqual(problems, []);
  await context.close();
});

test('without JavaScript: the form and the links still search, rendered by the server', async () => {
  const context = await uiContext(ui.browser, { javaScript: false });
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.fill('#q', 'granite');
  await page.press('#q', 'Enter');
  await page.waitForURL(/\/search\?q=granite/, WAIT);
  assert.match(await count(page) ?? '', /45 results/);
  await page.click('.pager a[rel="next"]');
  await page.waitForURL(/page=2/, WAIT);
  assert.match(await count(page) ?? '', /showing 21–40/);
  await page.click('#results > li:first-child h2 a');
  await page.waitForSelector('#doc-text mark', WAIT);
  await context.close();
});

test('hostile documents: titles, urls and texts with script, handlers and javascript: run nothing', async () => {
  const context = await uiContext(ui.browser);
  const page = await context.newPage();
  const problems = guard(page);
  for (const js of [true, false]) {
    await page.goto(`${url}/search?q=payload&scope=web`);
    if (js) { // let the script take over too: search again in place
      // `+payload`: a required term, so every hostile document matches (no common-terms rule applies)
      await page.fill('#q', '+payload');
      await page.press('#q', 'Enter');
      await page.waitForFunction(() => /results/.test(document.getElementById('count')?.textContent ?? '') && location.search.includes('%2Bpayload'), undefined, WAIT);
    }
    const links = await page.locator('#results h2 a').evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
    assert.equal(links.length, 3);
    for (const href of links) {
      await page.goto(`${url}${href}`);
      await page.waitForSelector('#doc-text', WAIT);
      assert.equal(await page.locator('#doc script, #doc img, #doc svg, #doc iframe').count(), 0);
    }
  }
  const hrefs = await page.evaluate(() => [...document.querySelectorAll('a')].map((a) => a.getAttribute('href') ?? ''));
  assert.ok(hrefs.every((h) => !/^\s*javascript:/i.test(h)), `no javascript: link: ${hrefs.join(' ')}`);
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  assert.deepEqual(problems, []);
  await context.close();
});

test('console: log in, deploy with plan and confirmation while another tab watches live, roll back', async () => {
  const context = await uiContext(ui.browser);
  const cap = await logIn(context, url);
  const watcher = await context.newPage();
  await watcher.addInitScript((c) => { sessionStorage.setItem('quarry.cap', c); }, cap);
  const problems = guard(watcher);
  await watcher.goto(`${url}/console`);
  await watcher.waitForFunction(() => document.querySelectorAll('#targets-body tr').length === 41
    && document.getElementById('live-label')?.textContent === 'Live', undefined, WAIT);
  assert.match(await watcher.textContent('#signed-in') ?? '', /uiadmin/);
  assert.match(await watcher.textContent('#my-rights') ?? '', /mgmt\.deploy/);
  assert.ok(await watcher.isVisible('#caps-list table'), 'auth.admin sees the capabilities');
  assert.ok(await watcher.isVisible('#crawl-panel'));
  await axe(watcher, 'the console');
  const cell = (col: string) => watcher.textContent(`#targets-body tr[data-target="sites"] td[data-col="${col}"]`);

  const page = await context.newPage();
  await page.addInitScript((c) => { sessionStorage.setItem('quarry.cap', c); }, cap);
  problems.push(...guard(page));
  await page.goto(`${url}/console/sites`);
  await page.waitForSelector('#do-deploy', WAIT);
  await axe(page, 'a target page');

  const succeeded = async (what: string) => {
    await page.waitForFunction((w) => new RegExp(`^${w}: (succeeded|failed)`).test(document.getElementById('op-state')?.textContent ?? ''), what, WAIT);
    assert.match(await page.textContent('#op-state') ?? '', /succeeded/, await page.textContent('#op-log') ?? '');
  };
  const deployVersion = async (): Promise<string> => {
    await page.click('#do-build');
    await succeeded('Build');
    await page.waitForFunction(() => (document.getElementById('stage-version') as HTMLSelectElement | null)?.value !== '', undefined, WAIT);
    const version = await page.inputValue('#stage-version');
    await page.click('#do-stage');
    await succeeded('Stage');
    await page.waitForFunction((v) => [...(document.getElementById('deploy-version') as HTMLSelectElement).options].some((o) => o.value === v), version, WAIT);
    await page.selectOption('#deploy-version', version);
    await page.click('#do-deploy');
    await page.waitForSelector('dialog[open]', WAIT);
    assert.match(await page.textContent('#plan-json') ?? '', new RegExp(`"to": "${version}"`), 'the dry-run plan is shown');
    assert.equal(await page.textContent('#confirm-title'), `Deploy sites to version ${version}?`);
    await page.click('#confirm-ok');
    await succeeded('Deploy');
    return version;
  };

  const v1 = await deployVersion();
  // The other tab was not reloaded: its row follows the event stream.
  await watcher.waitForFunction((v) => document.querySelector('#targets-body tr[data-target="sites"] td[data-col="live"]')?.textContent === v, v1, WAIT);
  await watcher.waitForFunction(() => document.querySelector('#targets-body tr[data-target="sites"] td[data-col="verdict"]')?.textContent === 'in_sync', undefined, WAIT);

  // A second version (a real input change), then back to the first.
  const content = join(ui.repo, 'deploy/targets/sites/content.md');
  writeFileSync(content, `${readFileSync(content, 'utf8')}\nA second version.\n`);
  const v2 = await deployVersion();
  assert.notEqual(v2, v1);
  await watcher.waitForFunction((v) => document.querySelector('#targets-body tr[data-target="sites"] td[data-col="live"]')?.textContent === v, v2, WAIT);
  await page.click('#do-rollback');
  await page.waitForSelector('dialog[open]', WAIT);
  assert.equal(await page.textContent('#confirm-title'), `Roll back sites to version ${v1}?`);
  await page.click('#confirm-ok');
  await succeeded('Rollback');
  await watcher.waitForFunction((v) => document.querySelector('#targets-body tr[data-target="sites"] td[data-col="live"]')?.textContent === v, v1, WAIT);
  assert.equal(await cell('desired'), v1);
  await page.waitForFunction(() => document.querySelectorAll('#history table').length === 3 && /rollback/.test(document.getElementById('history')?.textContent ?? ''), undefined, WAIT);

  // A holder of trusted.flag gets the control on a document; until the server has POST /api/trusted, its
  // 404 is said plainly.
  await page.goto(`${url}/search?q=granite&scope=web`);
  await page.click('#results > li:first-child h2 a');
  await page.click('#flag-button', WAIT);
  await page.waitForFunction(() => /^(Flagged|This server cannot flag)/.test(document.getElementById('flag-msg')?.textContent ?? ''), undefined, WAIT);

  // Capabilities: an invite minted with chosen rights, and a capability revoked (it then stops working).
  await watcher.check('#invite-form input[value="events.read"]');
  await watcher.click('#invite-form button[type="submit"]');
  await watcher.waitForSelector('#invite-code', WAIT);
  assert.ok((await watcher.textContent('#invite-code'))!.length > 10);
  const victim = mintCap(ui.dataDir, 'search');
  const whoami = (c: string) => watcher.evaluate(async (c) => {
    const r = await fetch('/api/auth/whoami', { headers: { authorization: `Bearer ${c}` } });
    return { status: r.status, id: ((await r.json()) as { cap_id?: string }).cap_id };
  }, c);
  const id = (await whoami(victim)).id!;
  await watcher.reload();
  await watcher.click(`button[data-revoke="${id}"]`, WAIT);
  await watcher.click('#confirm-ok');
  await watcher.waitForFunction((i) => !document.querySelector(`button[data-revoke="${i}"]`) && document.getElementById('caps-list')!.textContent!.includes(i), id, WAIT);
  assert.deepEqual(problems.filter((p) => !/status of 404/.test(p)), [], 'nothing but the flag\'s 404');
  assert.equal((await whoami(victim)).status, 401);
  await context.close();
});

test('the console\'s event stream applies a snapshot, reconnects with Last-Event-ID, and starts over on reset', async () => {
  const cap = mintCap(ui.dataDir, 'mgmt.read,events.read');
  const context = await uiContext(ui.browser, { cap });
  const page = await context.newPage();
  const seen: (string | undefined)[] = [];
  let reconnected: () => void;
  const again = new Promise<void>((resolve) => { reconnected = resolve; });
  // The first stream is a canned one the "server" ends at once; later ones go to the real server, which
  // answers the unknown id with `reset` and the full state.
  await page.route(`${url}/api/events`, async (route) => {
    seen.push(route.request().headers()['last-event-id']);
    if (seen.length > 1) {
      reconnected();
      return route.continue();
    }
    const snapshot = { v: 1, seq: 7, kind: 'snapshot', targets: [{ target: 'sites', verdict: 'from_snapshot', sync: 'unknown', health: 'unknown', desired: null, live: null, generation: 0, lock: null, last_op: null, stable_versions: [], reasons: [] }] };
    await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: `retry: 50\nid: 1-7\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n: comment\n\n` });
  });
  await page.goto(`${url}/console`);
  await again;
  await page.waitForFunction(() => document.querySelectorAll('#targets-body tr').length === 41 && document.getElementById('live-label')?.textContent === 'Live', undefined, WAIT);
  assert.equal(seen[0], undefined, 'the first stream asks for a snapshot');
  assert.equal(seen[1], '1-7', 'the reconnect resumes after the last id seen');
  assert.notEqual(await page.textContent('#targets-body tr[data-target="sites"] td[data-col="verdict"]'), 'from_snapshot', 'reset replaced the snapshot');
  await context.close();
});

test('a capability without mgmt.deploy sees no deploy button and is refused by hand', async () => {
  const cap = mintCap(ui.dataDir, 'mgmt.read,events.read');
  const context = await uiContext(ui.browser, { cap });
  const page = await context.newPage();
  await page.goto(`${url}/console/sites`);
  await page.waitForSelector('#action-msg', WAIT);
  assert.equal(await page.locator('#do-deploy, #do-build, #do-rollback').count(), 0);
  assert.match(await page.textContent('#actions-h + .actions + p') ?? '', /mgmt\.deploy/);
  const status = await page.evaluate(async () => (await fetch('/api/deploy', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${sessionStorage.getItem('quarry.cap')}` },
    body: JSON.stringify({ target: 'sites' }),
  })).status);
  assert.equal(status, 403);

  // The history the target page reads, checked against the served OpenAPI document.
  const reader = connect(ui.srv, { headers: { authorization: `Bearer ${cap}` } });
  const anon = connect(ui.srv);
  try {
    const h = await reader.get('/api/history?target=sites');
    assert.equal(h.status, 200);
    assert.ok(h.json.versions.length >= 2 && h.json.ops.some((o: { kind: string }) => o.kind === 'rollback'));
    assert.ok(h.json.audit.some((a: { action: string; result: string }) => a.result === 'denied'), 'the refused deploy is audited');
    assert.equal((await reader.get('/api/history?target=nope')).status, 404);
    assert.equal((await anon.get('/api/history?target=sites')).status, 401);
  } finally {
    reader.close();
    anon.close();
  }
  // The overview: the maturity grades of the indexed domains; no crawl panel without crawl.admin.
  await page.goto(`${url}/console`);
  await page.waitForSelector('#maturity-body table', WAIT);
  assert.match(await page.textContent('#maturity-body') ?? '', /example\.com/);
  assert.equal(await page.locator('#crawl-panel').count(), 0);
  await page.goto(`${url}/login`);
  await axe(page, 'the login page');
  await context.close();
});

test('every page: strict Content-Security-Policy, no inline script or style; dark and 360 px wide: no axe violation, no sideways scroll', async () => {
  const cap = mintCap(ui.dataDir, 'search,events.read,mgmt.read,auth.admin,crawl.admin');
  const context = await uiContext(ui.browser, { dark: true, width: 360, cap });
  const page = await context.newPage();
  const problems = guard(page);
  const ready: [string, string][] = [
    ['/', '#q'], ['/search?q=granite', '#results'], ['/search?q=payload&scope=web', '#results'], ['/doc/web/1', '.problem'],
    ['/console', '#targets-body tr'], ['/console', '#crawl-body p'], ['/console/sites', '#history table'], ['/login', '#session:not([hidden])'],
  ];
  for (const [path, selector] of ready) {
    const r = await page.goto(`${url}${path}`);
    await page.waitForSelector(selector, WAIT);
    const csp = r!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'/, path);
    assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'/, path);
    assert.equal(await page.locator('script:not([src]), style, [style]').count(), 0, path);
    await axe(page, `${path} (dark, 360 px)`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${path} fits 360 px`);
  }
  assert.deepEqual(problems.filter((p) => !/status of 404/.test(p)), [], 'only the missing document\'s own 404');
  await context.close();
});
