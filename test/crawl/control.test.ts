// Crawl control over REST against a real `quarry serve` and real sites on loopback addresses: an admin
// (`crawl.admin`) starts a crawl from seeds, pauses, resumes, stops and reads its status (hosts, errors,
// progress); every change is audited; anyone else gets 401/403 and changes nothing. The maturity rollup
// (GET /api/maturity) reads the same records.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect } from '../support/client.js';
import { mintCap } from '../control/server-support.js';
import { eventually, startOpenWebServer, startSite } from '../trusted/support.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const bearer = (cap: string) => ({ headers: { authorization: `Bearer ${cap}` } });

function pages(n: number, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n ? `<a href="/p${i + 1}">next</a>` : '<a href="/missing">gone</a>';
    out[`/p${i}`] = `<html><head><title>${prefix} ${i}</title></head><body><p>${prefix} page ${i} about quartz and mica ${i * 7}.</p>${next}</body></html>`;
  }
  return out;
}

test('start, pause, resume, stop and status over REST; audited; rights enforced', async () => {
  const a = await startSite('127.0.0.81', 'a.crawl-control.test', pages(6, 'alpha'));
  const b = await startSite('127.0.0.82', 'b.crawl-control.test', pages(4, 'beta'));
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-crawl-control-'));
  dirs.push(dataDir);
  const srv = await startOpenWebServer(dataDir, {
    allowPrivateNetworks: true, minDelayMs: 200, delayFactor: 0,
    resolve: { 'a.crawl-control.test': '127.0.0.81', 'b.crawl-control.test': '127.0.0.82' },
  });
  const api = connect(srv);
  try {
    const admin = mintCap(dataDir, 'crawl.admin,search');
    const other = mintCap(dataDir, 'mgmt.read,trusted.flag,index.write,search');
    const seeds = { seeds: [`${a.origin}/p0`, `${b.origin}/p0`, 'file:///etc/passwd'] };
    assert.equal((await api.post('/api/crawl/start', seeds)).status, 401);
    assert.equal((await api.post('/api/crawl/start', seeds, bearer(other))).status, 403);
    for (const op of ['pause', 'resume', 'stop']) assert.equal((await api.post(`/api/crawl/${op}`, undefined, bearer(other))).status, 403);
    assert.equal((await api.get('/api/crawl', bearer(other))).status, 403);
    assert.equal((await api.get('/api/crawl')).status, 401);
    assert.deepEqual(a.log, [], 'nothing fetched before an admin started the crawl');
    assert.equal((await api.post('/api/crawl/start', { seeds: 'x' }, bearer(admin))).status, 400);
    assert.equal((await api.post('/api/crawl/start', { seed: [] }, bearer(admin))).status, 400);

    const idle = await api.get('/api/crawl', bearer(admin));
    assert.equal(idle.status, 200, idle.text);
    assert.equal(idle.json.state, 'idle');

    const started = await api.post('/api/crawl/start', seeds, bearer(admin));
    assert.equal(started.status, 202, started.text);
    assert.equal(started.json.added, 2);
    assert.equal(started.json.refused.length, 1);
    assert.equal(started.json.refused[0].url, 'file:///etc/passwd');
    assert.ok(['running', 'idle'].includes(started.json.state));

    const paused = await api.post('/api/crawl/pause', undefined, bearer(admin));
    assert.equal(paused.status, 200, paused.text);
    // Six pages at 200 ms apart on site a cannot be done by the time the pause arrives.
    assert.equal(paused.json.state, 'paused');
    // Paused: whatever was in flight settles, then no request reaches either site.
    await eventually(async () => ((await api.get('/api/crawl', bearer(admin))).json.inFlight === 0 ? true : undefined), 'in-flight fetches to settle');
    const before = a.log.length + b.log.length;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(a.log.length + b.log.length, before, 'no fetch while paused');
    assert.equal((await api.post('/api/crawl/resume', undefined, bearer(admin))).json.state, 'running');

    const done = await eventually(async () => {
      const s = await api.get('/api/crawl', bearer(admin));
      return s.json.state === 'idle' && s.json.last_run ? s.json : undefined;
    }, 'the crawl to finish');
    assert.equal(done.last_run.errors, 2, 'one /missing per site');
    assert.deepEqual([...a.log.filter((p) => p !== '/robots.txt')].sort(), ['/missing', '/p0', '/p1', '/p2', '/p3', '/p4', '/p5']);
    assert.deepEqual([...b.log.filter((p) => p !== '/robots.txt')].sort(), ['/missing', '/p0', '/p1', '/p2', '/p3']);
    const hosts = done.host_figures.map((h: { host: string }) => h.host).sort();
    assert.deepEqual(hosts, ['a.crawl-control.test', 'b.crawl-control.test']);
    const ha = done.host_figures.find((h: { host: string }) => h.host === 'a.crawl-control.test');
    assert.equal(ha.fetched, 7);
    assert.equal(ha.docs, 6);
    assert.equal((await api.get('/api/search?q=quartz&scope=web')).json.total, 10);

    // The maturity rollup reads the same records: a domain and its subdomains, rates weighted by pages.
    const rollupOf = async (domain: string) => (await api.get(`/api/maturity?domain=${domain}`)).json.domains[0];
    const whole = await rollupOf('crawl-control.test');
    assert.ok(typeof whole.last_fetch_at === 'string');
    assert.equal(whole.fetch_error_rate, Math.round((2 / 12) * 10_000) / 10_000, 'one /missing per site of 12 pages fetched');
    assert.equal(whole.duplicate_rate, 0);
    assert.equal((await rollupOf('a.crawl-control.test')).fetch_error_rate, Math.round((1 / 7) * 10_000) / 10_000);
    assert.equal((await rollupOf('never.example')).fetch_error_rate, null);

    // Stop while running: state becomes stopping/idle; a stop when idle is harmless.
    await api.post('/api/crawl/start', { seeds: [`${a.origin}/p0?again=1`] }, bearer(admin));
    const stopped = await api.post('/api/crawl/stop', undefined, bearer(admin));
    assert.equal(stopped.status, 200);
    assert.ok(['stopping', 'idle'].includes(stopped.json.state));
    await eventually(async () => ((await api.get('/api/crawl', bearer(admin))).json.state === 'idle' ? true : undefined), 'the stop');

    const db = new Database(join(dataDir, 'state.sqlite'), { readonly: true });
    try {
      const actions = (db.prepare(`SELECT action FROM audit_log WHERE action LIKE 'crawl.%' ORDER BY id`).all() as { action: string }[]).map((r) => r.action);
      assert.deepEqual(actions.filter((x) => x === 'crawl.start'), ['crawl.start', 'crawl.start']);
      assert.ok(actions.includes('crawl.stop') && actions.includes('crawl.pause'));
    } finally { db.close(); }

  } finally {
    api.close();
    await srv.stop();
    await a.close();
    await b.close();
  }
});
