// The login page in a real browser (Debian chromium driven by playwright-core) against a real `quarry
// serve` process: the page runs the OPAQUE client, keeps the capability in sessionStorage, shows who is
// logged in, and the capability then opens an endpoint that needs a right (GET /api/caps, auth.admin);
// then an invite, registration and login through the page's forms.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startServer, type TestServer } from '../support/server.js';
import { openDb } from '../../src/store/db.js';
import { createAuth, stateDbPath } from '../../src/auth/index.js';
import { RIGHTS } from '../../src/kernel/principal.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const PASSWORD = 'browser-password-7';

let dataDir: string;
let srv: TestServer;
let browser: Browser;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-page-'));
  const db = openDb(stateDbPath(dataDir));
  try {
    await createAuth({ db, dataDir }).accounts.createLocally('webadmin', PASSWORD, RIGHTS, undefined);
  } finally {
    db.close();
  }
  srv = await startServer({ dataDir, waitFor: 'listening' });
  assert.ok(existsSync(CHROMIUM), `no chromium at ${CHROMIUM}: scripts/system-deps.sh installs Debian's chromium`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await srv?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('log in through the login page, then call an endpoint that needs a right', async () => {
  const context = await browser.newContext({ ignoreHTTPSErrors: true }); // the test server's self-signed certificate
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const bodies: string[] = [];
  page.on('request', (r) => { const b = r.postData(); if (b !== null) bodies.push(b); });

  await page.goto(`${srv.url}/login`);
  const callCaps = () => page.evaluate(async () => {
    const cap = sessionStorage.getItem('quarry.cap');
    const res = await fetch('/api/caps', { headers: cap === null ? {} : { authorization: `Bearer ${cap}` } });
    return { status: res.status, body: await res.json() as { caps?: { account: string | null }[] } };
  });
  assert.equal((await callCaps()).status, 401, 'not logged in yet');

  await page.fill('#username', 'webadmin');
  await page.fill('#password', 'wrong password');
  await page.click('#login-button');
  await page.waitForFunction(() => document.getElementById('status')?.className === 'error');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('quarry.cap')), null);

  await page.fill('#password', PASSWORD);
  await page.click('#login-button');
  await page.waitForFunction(() => document.getElementById('who')?.textContent === 'webadmin', undefined, { timeout: 30_000 });
  assert.ok(await page.isVisible('#session'));
  assert.match(await page.textContent('#rights') ?? '', /auth\.admin/);

  const caps = await callCaps();
  assert.equal(caps.status, 200);
  assert.ok(caps.body.caps?.some((c) => c.account === 'webadmin'));
  assert.ok(bodies.every((b) => !b.includes(PASSWORD)), 'the password never left the page');
  assert.deepEqual(errors, []);

  // An invite minted with the admin's capability, then registration and login through the page's forms.
  const invite = await page.evaluate(async () => {
    const res = await fetch('/api/auth/invites', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sessionStorage.getItem('quarry.cap')}` },
      body: JSON.stringify({ rights: ['search', 'events.read'] }),
    });
    return ((await res.json()) as { invite: string }).invite;
  });
  await page.click('#logout');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('quarry.cap')), null);

  await page.click('summary');
  await page.fill('#reg-invite', invite);
  await page.fill('#reg-username', 'webuser');
  await page.fill('#reg-password', 'another-password-8');
  await page.click('#register-button');
  await page.waitForFunction(() => /Registered webuser/.test(document.getElementById('status')?.textContent ?? ''), undefined, { timeout: 30_000 });
  await page.fill('#password', 'another-password-8');
  await page.click('#login-button');
  await page.waitForFunction(() => document.getElementById('who')?.textContent === 'webuser', undefined, { timeout: 30_000 });
  assert.equal(await page.textContent('#rights'), 'search, events.read');
  assert.equal((await callCaps()).status, 403, 'logged in, but without auth.admin');
  assert.ok(bodies.every((b) => !b.includes('another-password-8')));
  assert.deepEqual(errors, []);
  await context.close();
});
