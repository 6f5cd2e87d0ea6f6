// `quarry crawl` killed with SIGKILL at random moments and resumed: after every kill, each URL the
// records say was fetched has its response in the WARC, each one recorded as indexed is in the web index,
// and the servers' logs show no URL asked for again once the records said it was fetched. The last run
// goes to the end and leaves nothing unindexed. QUARRY_CRAWL_KILLS sets the number of kills (default 5;
// docs/crawling.md records a run of 20).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Index } from '../../src/engine/index.js';
import { readRecordAt } from '../../src/crawl/index.js';
import { indexDir, stateDbPath } from '../../src/kernel/data-dir.js';
import { startTestWeb, type TestWeb } from './support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KILLS = Number(process.env['QUARRY_CRAWL_KILLS'] ?? 5);

let web: TestWeb | undefined;
let dir: string | undefined;
after(async () => {
  await web?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Snapshot { at: number; fetched: Set<string> }

/** What the records say at this moment, after checking it against the WARC and the index. */
async function check(data: string, label: string): Promise<{ fetched: Set<string>; pending: number; indexed: number }> {
  const db = new Database(stateDbPath(data), { readonly: true });
  try {
    const rows = db.prepare(`SELECT u.url, u.state, u.indexed, u.outcome, u.warc_file, u.warc_offset, u.warc_length, c.cid
      FROM crawl_urls u LEFT JOIN cid_keys c ON c.key = u.url WHERE u.fetched_at IS NOT NULL`).safeIntegers(true).all() as
      { url: string; state: string; indexed: bigint; outcome: string; warc_file: string | null; warc_offset: bigint | null; warc_length: bigint | null; cid: bigint | null }[];
    const fetched = new Set(rows.map((r) => r.url));
    for (const h of db.prepare('SELECT host FROM crawl_hosts WHERE robots_fetched_at IS NOT NULL').all() as { host: string }[]) fetched.add(`${h.host}/robots.txt`);
    let index: Index | undefined;
    try { index = await Index.open(indexDir(data, 'web')); } catch { /* not created yet */ }
    try {
      const searcher = index?.searcher();
      let pending = 0;
      let indexed = 0;
      for (const r of rows) {
        if (r.outcome === 'indexed' || r.state === 'fetched') {
          assert.ok(r.warc_file, `${label}: ${r.url} has no WARC record`);
          const item = readRecordAt(r.warc_file, Number(r.warc_offset), Number(r.warc_length));
          assert.ok(item?.ok, `${label}: the WARC record of ${r.url} does not read back as its document`);
        }
        if (r.state === 'fetched') pending++;
        if (r.indexed === 1n) {
          indexed++;
          assert.ok(r.cid !== null && searcher?.get(r.cid), `${label}: ${r.url} is recorded as indexed but is not in the web index`);
        }
      }
      return { fetched, pending, indexed };
    } finally {
      await index?.close();
    }
  } finally {
    db.close();
  }
}

function requests(w: TestWeb): number {
  return w.hosts.reduce((n, h) => n + h.log.length, 0);
}

test(`a crawl killed ${KILLS} times at random moments loses nothing and refetches nothing it recorded`, { timeout: 600_000 }, async (t) => {
  web = await startTestWeb({ firstAddress: 100 });
  dir = mkdtempSync(join(tmpdir(), 'quarry-crawl-kill-'));
  const data = join(dir, 'data');
  const config = join(dir, 'quarry.json');
  writeFileSync(config, JSON.stringify({
    crawl: {
      allowPrivateNetworks: true, resolve: Object.fromEntries(web.hosts.map((h) => [h.name, h.address])),
      minDelayMs: 10, maxPagesPerHost: 12, timeoutMs: 3000, stallTimeoutMs: 500, flushIntervalMs: 100,
      maxRetryAfterMs: 1500, maxCalendarPagesPerHost: 6, concurrency: 8,
    },
    corpora: { own: { docs: null, site: null, library: null }, ingest: { commitEveryDocs: 25, commitEverySeconds: 0.5 } },
  }));
  const seeds = join(dir, 'seeds.txt');
  writeFileSync(seeds, web.seeds.join('\n'));
  const snapshots: Snapshot[] = [];
  let pendingAtKills = 0;
  let killsWithPending = 0;
  let seed = 12345;
  const random = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };

  for (let k = 0; k <= KILLS; k++) {
    const last = k === KILLS;
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'crawl', '--data', data, '--config', config, '--seeds', seeds, '--json'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { out += c; });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    if (!last) {
      // A random moment: after 3 to 40 more requests reach the servers, or at once if the run ends first.
      const target = requests(web) + 3 + Math.floor(random() * 38);
      let ended = false;
      void exited.then(() => { ended = true; });
      while (!ended && requests(web) < target) await new Promise((r) => setTimeout(r, 5));
      child.kill('SIGKILL');
    }
    const code = await exited;
    if (last) assert.equal(code, 0, out);
    const state = await check(data, last ? 'final run' : `after kill ${k + 1}`);
    if (!last) { pendingAtKills += state.pending; if (state.pending > 0) killsWithPending++; }
    snapshots.push({ at: Date.now(), fetched: state.fetched });
    if (last) {
      assert.equal(state.pending, 0, 'every fetched document is acknowledged by an index commit');
      assert.ok(state.indexed > 50, `${state.indexed} documents indexed`);
    }
  }

  // A request for a URL the records already called fetched (at a kill before the request) is a refetch
  // without reason. Retries of failures (5xx, 429, stalls) are not recorded as fetched in between.
  const violations: string[] = [];
  for (const h of web.hosts) {
    for (const r of h.log) {
      const url = `${h.origin}${r.path}`;
      const recordedBefore = snapshots.find((s) => s.at < r.at && s.fetched.has(url));
      if (recordedBefore) violations.push(`${url} at ${r.at}, recorded at ${recordedBefore.at}`);
    }
  }
  assert.deepEqual(violations, []);
  // What the kills interrupted: fetches redone because they were in flight or not yet recorded, and
  // documents re-indexed from the WARC because no commit had acknowledged them.
  const total = web.hosts.reduce((n, h) => n + h.log.length, 0);
  const distinct = web.hosts.reduce((n, h) => n + new Set(h.log.map((r) => r.path)).size, 0);
  t.diagnostic(`${KILLS} kills; ${total} requests for ${distinct} URLs (${total - distinct} repeated: unrecorded fetches redone and retries of failures); `
    + `${pendingAtKills} documents re-indexed from the WARC after ${killsWithPending} of the kills`);
});
