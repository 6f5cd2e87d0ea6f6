// `npm run screenshots`: screenshots of every page of the web UI, light and dark, desktop (1280 px) and
// phone (360 px), into docs/ui/ (docs/ui.md shows them). It starts the same server as the UI's browser
// tests (test/ui/support.ts: fixture corpus, a copy of deploy/), deploys one target so the console has
// something to show, and drives Debian's chromium.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { mintCap, startUi, uiContext } from '../test/ui/support.js';
import { REPO_ROOT } from '../test/support/server.js';

const OUT = join(REPO_ROOT, 'docs', 'ui');
const ALL = 'search,trusted.flag,events.read,mgmt.read,mgmt.build,mgmt.stage,mgmt.deploy,mgmt.rollback,mgmt.reconcile,mgmt.restart,auth.admin';

/** name → how to reach the page and what shows that it is ready. */
const PAGES: { name: string; path: string; ready: string; cap?: boolean }[] = [
  { name: 'search', path: '/', ready: '#q' },
  { name: 'results', path: '/search?q=granite+quarry', ready: '#results' },
  { name: 'did-you-mean', path: '/search?q=elephnt', ready: '#did-you-mean' },
  { name: 'document', path: '', ready: '#doc-text mark', cap: true },
  { name: 'login', path: '/login', ready: '#login:not([hidden])' },
  { name: 'console', path: '/console', ready: '#targets-body tr', cap: true },
  { name: 'target', path: '/console/sites', ready: '#history table', cap: true },
];

async function settle(page: Page, ready: string): Promise<void> {
  await page.waitForSelector(ready, { timeout: 120_000 });
  await page.waitForLoadState('networkidle').catch(() => undefined);
}

const dir = mkdtempSync(join(tmpdir(), 'quarry-shots-'));
const ui = await startUi(dir);
try {
  mkdirSync(OUT, { recursive: true });
  const cap = mintCap(ui.dataDir, ALL);
  // Build, stage and deploy one target so the console and its target page have a history to show.
  const setup = await uiContext(ui.browser, { cap });
  const p = await setup.newPage();
  await p.goto(`${ui.srv.url}/console/sites`);
  await p.waitForSelector('#do-build', { timeout: 120_000 });
  const op = async (path: string, body: unknown) => p.evaluate(async ([path, body]) => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${sessionStorage.getItem('quarry.cap')}` };
    const r = await (await fetch(path as string, { method: 'POST', headers, body: JSON.stringify(body) })).json() as { op_id: string };
    for (;;) {
      const o = await (await fetch(`/api/ops/${r.op_id}`, { headers })).json() as { state: string; version: string };
      if (o.state === 'succeeded' || o.state === 'failed') return o;
      await new Promise((res) => setTimeout(res, 300));
    }
  }, [path, body] as const);
  const built = await op('/api/build', { target: 'sites' });
  await op('/api/upload', { target: 'sites', version: built.version });
  await op('/api/deploy', { target: 'sites', version: built.version });
  await p.goto(`${ui.srv.url}/search?q=quick+brown+fox`);
  const docPath = await p.getAttribute('#results h2 a', 'href');
  await setup.close();

  for (const dark of [false, true]) {
    for (const width of [1280, 360]) {
      const context = await uiContext(ui.browser, { dark, width, cap });
      const anon = await uiContext(ui.browser, { dark, width });
      for (const pg of PAGES) {
        const page = await (pg.cap ? context : anon).newPage();
        await page.goto(`${ui.srv.url}${pg.name === 'document' ? docPath : pg.path}`);
        await settle(page, pg.ready);
        const file = join(OUT, `${pg.name}-${dark ? 'dark' : 'light'}-${width === 360 ? 'phone' : 'desktop'}.png`);
        await page.screenshot({ path: file });
        console.log(file);
        await page.close();
      }
      await context.close();
      await anon.close();
    }
  }
} finally {
  await ui.browser.close();
  await ui.srv.stop();
  rmSync(dir, { recursive: true, force: true });
}
