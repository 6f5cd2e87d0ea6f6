/**
 * A real `quarry serve` for the web UI's browser tests and the screenshot script: the fixture corpus
 * (test/support/fixture-corpus.ts), a few hostile documents in the web corpus (script, event-handler and
 * `javascript:` payloads in titles, URLs and texts), a private copy of deploy/ for the control plane, an
 * account `uiadmin` with every right, and Debian's chromium driven by playwright-core.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { createAuth, stateDbPath } from '../../src/auth/index.js';
import { openCorpora } from '../../src/corpora/index.js';
import { RIGHTS } from '../../src/kernel/principal.js';
import { openDb } from '../../src/store/db.js';
import { copyDeploy } from '../control/support.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { QUARRY_BIN, REPO_ROOT, startServer, type TestServer } from '../support/server.js';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const ADMIN = { username: 'uiadmin', password: 'ui-admin-password-9' };

/** Documents that would run code if any page treated their fields as markup. All hold the word "payload". */
export const XSS_DOCS = [
  { url: 'https://xss.example/a?"><script>window.__xss=1</script>', title: '<script>window.__xss=2;alert(2)</script> payload title', text: 'payload <img src=x onerror="window.__xss=3;alert(3)"> and </pre><script>alert(4)</script>' },
  { url: 'https://xss.example/b', title: '"><svg onload=alert(5)> payload', text: '<a href="javascript:alert(6)">payload link</a> <iframe srcdoc="<script>alert(7)</script>"></iframe>' },
  { url: 'javascript:alert(8)//payload', title: 'javascript: url payload', text: 'A page whose url is a javascript: payload; {{constructor.constructor("alert(9)")()}}' },
];

export interface UiServer { srv: TestServer; repo: string; dataDir: string; browser: Browser }

export async function startUi(dir: string): Promise<UiServer> {
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const repo = copyDeploy(dir);
  await writeFixtureCorpus(dataDir);
  const corpora = await openCorpora({ dataDir });
  try {
    const items = XSS_DOCS.map((d) => {
      let host = 'xss.example';
      try { host = new URL(d.url).hostname || host; } catch { /* kept */ }
      return { ok: true as const, doc: { key: d.url, url: d.url, host, title: d.title, text: d.text } };
    });
    await corpora.ingest('web', items);
  } finally {
    await corpora.close();
  }
  const db = openDb(stateDbPath(dataDir));
  try {
    await createAuth({ db, dataDir }).accounts.createLocally(ADMIN.username, ADMIN.password, RIGHTS, undefined);
  } finally {
    db.close();
  }
  const configFile = join(dir, 'quarry.json');
  writeFileSync(configFile, JSON.stringify({
    corpora: { own: { docs: join(dataDir, 'fixture-own'), site: null, library: null } },
    control: { repoRoot: repo, resyncIntervalMs: 0 },
  }));
  const srv = await startServer({ dataDir, args: ['--config', configFile], timeoutMs: 180_000 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return { srv, repo, dataDir, browser };
}

/** A capability minted on the data directory with the CLI, as an operator would. */
export function mintCap(dataDir: string, rights: string): string {
  const r = spawnSync(process.execPath, [QUARRY_BIN, 'cap', 'mint', '--rights', rights, '--ttl', '2h', '--data', dataDir], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cap mint failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** A browser context trusting the test server, whose tabs start holding `cap` when given. */
export async function uiContext(browser: Browser, options: { cap?: string; dark?: boolean; width?: number; javaScript?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true, // the test server's self-signed certificate
    colorScheme: options.dark ? 'dark' : 'light',
    viewport: { width: options.width ?? 1280, height: 900 },
    javaScriptEnabled: options.javaScript ?? true,
  });
  if (options.cap) await context.addInitScript((cap) => { sessionStorage.setItem('quarry.cap', cap); }, options.cap);
  return context;
}

/** Logs in through the login page (OPAQUE in the page) and returns the capability the tab now holds. */
export async function logIn(context: BrowserContext, url: string): Promise<string> {
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await page.fill('#username', ADMIN.username);
  await page.fill('#password', ADMIN.password);
  await page.click('#login-button');
  await page.waitForFunction(() => document.getElementById('who')?.textContent === 'uiadmin', undefined, { timeout: 60_000 });
  const cap = await page.evaluate(() => sessionStorage.getItem('quarry.cap'));
  await page.close();
  return cap!;
}
