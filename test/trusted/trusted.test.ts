// The trusted corpus against a real `quarry serve` and a real site on a loopback address: a flagged URL
// is fetched politely by the server's crawler, indexed into `trusted` and searchable under
// `scope=trusted`, with an audit row and `trusted.flagged` events; a cid of the web corpus is copied at
// once; unflagging removes it; rights are enforced; hostile URLs are a 400 and fetch nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect } from '../support/client.js';
import { mintCap } from '../control/server-support.js';
import { eventually, readEvents, startOpenWebServer, startSite } from './support.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'quarry-trusted-'));
  dirs.push(d);
  return d;
}
const bearer = (cap: string) => ({ headers: { authorization: `Bearer ${cap}` } });

test('flag → fetched politely → searchable under scope=trusted, audited, announced; unflag removes it', async () => {
  const site = await startSite('127.0.0.71', 'ref.trusted.test', {
    '/guide': '<html><head><title>Cinnabar guide</title></head><body><p>The cinnabar reference guide, vetted.</p></body></html>',
  });
  const srv = await startOpenWebServer(dataDir(), { allowPrivateNetworks: true, minDelayMs: 0, resolve: { 'ref.trusted.test': '127.0.0.71' } });
  const api = connect(srv);
  try {
    const cap = mintCap(srv.dataDir, 'trusted.flag,search,events.read,index.write');
    const flagged = readEvents(srv, cap, (kind, data) => kind === 'trusted.flagged' && data.state === 'fetched');
    const r = await api.post('/api/trusted', { url: `${site.origin}/guide?utm_source=newsletter`, note: 'the canonical reference' }, bearer(cap));
    assert.equal(r.status, 202, r.text);
    assert.equal(r.json.state, 'pending');
    assert.equal(r.json.url, `${site.origin}/guide`);
    const cid = r.json.cid as string;

    const fetched = await eventually(async () => {
      const l = await api.get('/api/trusted', bearer(cap));
      assert.equal(l.status, 200, l.text);
      const f = l.json.flags.find((x: { cid: string }) => x.cid === cid);
      return f?.state === 'fetched' ? f : undefined;
    }, 'the flagged URL to be fetched');
    assert.equal(fetched.title, 'Cinnabar guide');
    assert.equal(fetched.note, 'the canonical reference');
    assert.match(fetched.flagged_by.cap_id, /./);
    assert.ok(!Number.isNaN(Date.parse(fetched.flagged_at)));
    assert.deepEqual(site.log.filter((p) => p === '/guide'), ['/guide'], 'fetched once');

    const events = await flagged;
    assert.deepEqual(events.filter((e) => e.kind === 'trusted.flagged').map((e) => e.data.state), ['pending', 'fetched']);
    assert.ok(events[0]!.kind === 'snapshot' && 'crawl' in events[0]!.data, 'the snapshot carries the crawl status');

    const s = await api.get('/api/search?q=cinnabar&scope=trusted');
    assert.equal(s.json.total, 1);
    assert.equal(s.json.results[0].cid, cid);
    assert.equal((await api.get(`/api/doc?cid=${cid}&scope=trusted`)).status, 200);
    assert.deepEqual((await api.get('/api/suggest?q=cinna&scope=trusted')).json.suggestions.slice(0, 1), ['cinnabar']);

    const db = new Database(join(srv.dataDir, 'state.sqlite'), { readonly: true });
    try {
      const audit = db.prepare(`SELECT actor, action, target, result FROM audit_log WHERE action LIKE 'trusted.%'`).all() as Record<string, string>[];
      assert.deepEqual(audit.map((a) => [a.action, a.target, a.result]), [['trusted.flag', cid, 'ok']]);
      assert.equal(audit[0]!.actor, fetched.flagged_by.cap_id);
    } finally { db.close(); }

    // A cid of the web corpus is copied into trusted at once (201), nothing fetched.
    const add = await api.post('/api/documents?corpus=web', [{ url: 'https://elsewhere.example.org/basalt', text: 'basalt columns explained' }], bearer(cap));
    assert.equal(add.status, 200, add.text);
    const webCid = (await api.get('/api/search?q=basalt&scope=web')).json.results[0].cid as string;
    const copy = await api.post('/api/trusted', { cid: webCid }, bearer(cap));
    assert.equal(copy.status, 201, copy.text);
    assert.equal(copy.json.state, 'fetched');
    assert.equal((await api.get('/api/search?q=basalt&scope=trusted')).json.total, 1);
    assert.equal((await api.post('/api/trusted', { cid: '12345' }, bearer(cap))).status, 404);
    assert.equal((await api.post('/api/trusted', { cid: webCid, url: `${site.origin}/guide` }, bearer(cap))).status, 400);

    // A flagged URL that answers 404 fails, with the outcome; nothing enters the trusted corpus.
    const missing = await api.post('/api/trusted', { url: `${site.origin}/absent` }, bearer(cap));
    assert.equal(missing.status, 202, missing.text);
    const failed = await eventually(async () => {
      const f = (await api.get('/api/trusted', bearer(cap))).json.flags.find((x: { cid: string }) => x.cid === missing.json.cid);
      return f?.state === 'failed' ? f : undefined;
    }, 'the 404 to fail the flag');
    assert.match(failed.error, /404/);
    // Flagging it again asks for it again: fetched a second time (politely), failing the same way.
    const retry = await api.post('/api/trusted', { url: `${site.origin}/absent`, note: 'try again' }, bearer(cap));
    assert.equal(retry.status, 202, retry.text);
    await eventually(async () => (site.log.filter((p) => p === '/absent').length === 2 ? true : undefined), 'the second fetch');
    await eventually(async () => {
      const f = (await api.get('/api/trusted', bearer(cap))).json.flags.find((x: { cid: string }) => x.cid === missing.json.cid);
      return f?.state === 'failed' && f.note === 'try again' ? f : undefined;
    }, 'the re-flag to fail again');

    const list = await api.get('/api/trusted?page=0', bearer(cap));
    assert.equal(list.json.total, 3);
    assert.equal((await api.get('/api/trusted?page=1', bearer(cap))).json.flags.length, 0);

    const un = await api.request('DELETE', `/api/trusted?cid=${cid}`, undefined, bearer(cap));
    assert.equal(un.status, 200, un.text);
    assert.equal((await api.get('/api/search?q=cinnabar&scope=trusted')).json.total, 0);
    assert.equal((await api.get('/api/trusted', bearer(cap))).json.total, 2);
    assert.equal((await api.request('DELETE', `/api/trusted?cid=${cid}`, undefined, bearer(cap))).status, 404);
  } finally {
    api.close();
    await srv.stop();
    await site.close();
  }
});

test('rights and hostile URLs: 401 anonymous, 403 without trusted.flag, 400 and nothing fetched', async () => {
  const site = await startSite('127.0.0.72', 'hostile.trusted.test', { '/': '<title>x</title><p>never fetched</p>' });
  // The default crawl configuration: private and loopback addresses are refused.
  const srv = await startOpenWebServer(dataDir(), {});
  const api = connect(srv);
  try {
    const url = `http://127.0.0.72:${site.port}/`;
    assert.equal((await api.post('/api/trusted', { url })).status, 401);
    assert.equal((await api.get('/api/trusted')).status, 401);
    const searcher = mintCap(srv.dataDir, 'search,index.write');
    const denied = await api.post('/api/trusted', { url }, bearer(searcher));
    assert.equal(denied.status, 403);
    assert.equal((await api.request('DELETE', '/api/trusted?cid=1', undefined, bearer(searcher))).status, 403);

    const cap = mintCap(srv.dataDir, 'trusted.flag');
    const hostile = [
      'file:///etc/passwd', 'javascript:alert(1)', 'gopher://example.org/', 'ftp://example.org/x', 'data:text/html,<p>x</p>',
      url, `http://localhost:${site.port}/`, `http://[::1]:${site.port}/`, `http://127.0.0.1:${site.port}/`, `http://0x7f000001:${site.port}/`,
      `http://example.org/${'a'.repeat(10 * 1024)}`, 'not a url', '',
    ];
    for (const u of hostile) {
      const r = await api.post('/api/trusted', { url: u }, bearer(cap));
      assert.equal(r.status, 400, `${u.slice(0, 60)} → ${r.status} ${r.text}`);
      if (u !== '') assert.equal(r.json.error.param, 'url', u.slice(0, 60));
    }
    assert.equal((await api.post('/api/trusted', { note: 'neither' }, bearer(cap))).status, 400);
    assert.equal((await api.get('/api/trusted?page=x', bearer(cap))).status, 400);
    assert.equal((await api.get('/api/trusted', bearer(cap))).json.total, 0);
    assert.deepEqual(site.log, [], 'nothing was fetched');
  } finally {
    api.close();
    await srv.stop();
    await site.close();
  }
});

test('kill -9 just as the flagged page is fetched: after a restart the flag still ends fetched and searchable', async () => {
  const site = await startSite('127.0.0.73', 'kill.trusted.test', {
    '/ref': '<html><head><title>Malachite notes</title></head><body><p>Malachite, the vetted reference.</p></body></html>',
  });
  const dir = dataDir();
  const crawl = { allowPrivateNetworks: true, minDelayMs: 0, resolve: { 'kill.trusted.test': '127.0.0.73' } };
  let srv = await startOpenWebServer(dir, crawl);
  let api = connect(srv);
  try {
    const cap = mintCap(dir, 'trusted.flag,search');
    const r = await api.post('/api/trusted', { url: `${site.origin}/ref` }, bearer(cap));
    assert.equal(r.status, 202, r.text);
    await eventually(async () => (site.log.includes('/ref') ? true : undefined), 'the crawler to request the page', 60_000);
    srv.child.kill('SIGKILL');
    await srv.stop();
    api.close();

    srv = await startOpenWebServer(dir, crawl);
    api = connect(srv);
    const flag = await eventually(async () => {
      const f = (await api.get('/api/trusted', bearer(cap))).json.flags[0];
      return f?.state === 'fetched' ? f : undefined;
    }, 'the flag to be fetched after the restart');
    assert.equal(flag.cid, r.json.cid);
    assert.equal((await api.get('/api/search?q=malachite&scope=trusted')).json.total, 1);
    // Fetched again only when the kill came before the fetch was recorded.
    assert.ok(site.log.filter((p) => p === '/ref').length <= 2, site.log.join(' '));
  } finally {
    api.close();
    await srv.stop();
    await site.close();
  }
});
