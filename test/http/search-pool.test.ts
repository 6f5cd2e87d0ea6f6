/**
 * Searches on worker threads: the pool answers exactly as the engine on the main thread, sees every
 * commit (announced, or named by the task's generation), carries errors across as the same codes; and
 * on a real server a search that would take seconds is cut at its budget with 503 while the other
 * searches keep being answered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index } from '../../src/engine/index.js';
import { indexDir } from '../../src/kernel/data-dir.js';
import { QuarryError } from '../../src/kernel/errors.js';
import { toJson } from '../../src/kernel/json.js';
import { resolveSearchConfig } from '../../src/search/config.js';
import { CLAIM_CELLS, ClaimBoard } from '../../src/search/claims.js';
import { SEARCH_THREAD_NICE, SearchPool } from '../../src/search/pool.js';
import { SearchService } from '../../src/search/service.js';
import { LOCAL_OPERATOR } from '../../src/kernel/principal.js';
import { SLOW_QUERY, writeSlowCorpus } from '../support/slow-corpus.js';
import { startServer } from '../support/server.js';
import { connect } from '../support/client.js';

const DOCS = [
  { cid: 11n, title: 'Granite quarries', text: 'Granite is cut from quarries in blocks; the quarry face is worked in benches.', url: 'https://example.org/granite' },
  { cid: 12n, title: 'Marble', text: 'Marble quarries of Carrara have been worked since Roman times.' },
  { cid: 13n, title: 'Slate', text: 'Slate splits into thin sheets used for roofing.' },
];

/** An index in the `web` corpus of a fresh data directory and a pool of `workers` over it, closed after `fn`. */
async function withPool(
  workers: number, fn: (f: { dataDir: string; index: Index; pool: SearchPool }) => Promise<void>, fill?: (dir: string) => Promise<void>, workerModule?: URL,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-pool-'));
  await fill?.(indexDir(dataDir, 'web'));
  const index = await Index.open(indexDir(dataDir, 'web'));
  const pool = new SearchPool(workerModule === undefined ? { dataDir, workers } : { dataDir, workers, workerModule });
  try {
    await fn({ dataDir, index, pool });
  } finally {
    await pool.close();
    await index.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Commits every one of DOCS; the generation. */
async function commitDocs(index: Index): Promise<number> {
  const writer = await index.openWriter();
  for (const d of DOCS) writer.upsert(d);
  const { generation } = await writer.commit();
  await writer.close();
  return generation;
}

test('the pool answers search, doc and suggest as the engine does, and sees each commit', () => withPool(2, async ({ index, pool }) => {
  const writer = await index.openWriter();
  for (const d of DOCS.slice(0, 2)) writer.upsert(d);
  let info = await writer.commit();
  const local = index.searcher();
  const remote = pool.searcher('web', info.generation);
  const options = { page: 0, pageSize: 20, snippets: true };
  for (const q of ['quarries', 'granite OR marble', '"quarry face"', 'marbel', '+roman -granite']) {
    assert.deepEqual(await remote.search(q, options), local.search(q, options), q);
  }
  // The page as JSON bytes, made in the worker: the bytes the service's resource serializes to here.
  const onPool = new SearchService(pool.source({ searcher: () => local }));
  const here = new SearchService({ searcher: () => local });
  for (const input of [{ q: 'quarries', scope: 'web' }, { q: 'marbel', scope: 'web', page: '0' }, { q: '"quarry face" +granite', scope: 'web' }]) {
    const bytes = await onPool.searchJson(LOCAL_OPERATOR, input);
    assert.equal(Buffer.from(bytes).toString(), toJson(await here.search(LOCAL_OPERATOR, input)), input.q);
    assert.deepEqual(await here.searchJson(LOCAL_OPERATOR, input), bytes);
  }
  assert.deepEqual(await remote.get(11n), local.get(11n));
  assert.equal(await remote.get(999n), undefined);
  assert.deepEqual(await remote.suggest('qua', 10), local.suggest('qua', 10));

  // A commit announced to the pool, then one the task names by generation only: both are seen.
  writer.upsert(DOCS[2]!);
  info = await writer.commit();
  pool.committed('web', info.generation);
  assert.equal((await pool.searcher('web', info.generation).search('slate', options)).total, 1);
  writer.delete(12n);
  info = await writer.commit();
  for (let i = 0; i < 4; i++) {
    assert.equal((await pool.searcher('web', info.generation).search('marble', options)).total, 0, 'every worker sees the delete');
  }
  await writer.close();

  // Errors cross the thread boundary with their code and parameter.
  await assert.rejects(async () => pool.searcher('web', 0).search('x', { page: -1 }), (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, 'bad_page');
    return true;
  });
  await assert.rejects(async () => pool.searcher('web', 0).search('granite', { deadline: Date.now() - 1 }), (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, 'unavailable');
    assert.equal((err as unknown as { retryAfterSeconds: number }).retryAfterSeconds, 1);
    return true;
  });
}));

test('searches are answered in the order they arrived: none is overtaken while it waits for a worker', () => withPool(1, async ({ index, pool }) => {
  const generation = await commitDocs(index);
  await pool.warm(['web']);
  const searcher = pool.searcher('web', generation);
  const answered: number[] = [];
  // One worker: the first search runs at once, the other eleven queue behind it.
  await Promise.all(Array.from({ length: 12 }, (_, i) => Promise.resolve(searcher.search('quarries', {})).then(() => { answered.push(i); })));
  assert.deepEqual(answered, Array.from({ length: 12 }, (_, i) => i));
}));

test('no search waits behind a slow one while another worker is free', () => withPool(2, async ({ index, pool }) => {
  await pool.warm(['web']);
  const searcher = pool.searcher('web', index.generation);
  let slowEnded = false;
  const slow = Promise.resolve(searcher.search(SLOW_QUERY, { deadline: Date.now() + 1500 })).then(
    () => assert.fail('the slow search ends at its budget'),
    (err: unknown) => { slowEnded = true; assert.ok(QuarryError.is(err) && err.code === 'unavailable', String(err)); },
  );
  // Posted after it, to both workers: every one is answered by the other worker while it runs.
  for (let i = 0; i < 8; i++) {
    assert.equal((await searcher.search('omega', {})).total, 400);
    assert.equal(slowEnded, false, `search ${i} waited for the slow one`);
  }
  await slow;
}, writeSlowCorpus));

test('more tasks than the claim board has cells wait their turn and are each answered once, in order', { timeout: 60_000 }, () => withPool(1, async ({ index, pool }) => {
  const searcher = pool.searcher('web', index.generation);
  const n = CLAIM_CELLS + 300;
  // The one worker runs a slow search while every other task is posted or, past the board's cells, waits.
  const slow = Promise.resolve(searcher.search(SLOW_QUERY, { deadline: Date.now() + 3000 })).catch((err: unknown) => err);
  while (pool.waiting > 0) await new Promise((resolve) => setImmediate(resolve));
  const answered: number[] = [];
  const all = Array.from({ length: n }, (_, i) => Promise.resolve(searcher.search(i % 2 === 0 ? 'omega' : 'zeta omega', { pageSize: 1 })).then((r) => {
    answered.push(i);
    return r.total;
  }));
  assert.equal(pool.waiting, n, 'all of them wait behind the slow search');
  await slow;
  const totals = await Promise.all(all);
  assert.deepEqual(answered, Array.from({ length: n }, (_, i) => i));
  assert.ok(totals.every((t) => t === 400), 'each task got its own answer');
  assert.equal(pool.waiting, 0);
}, writeSlowCorpus));

test('a pool larger than the fan-out answers every task once', { timeout: 60_000 }, () => withPool(10, async ({ index, pool }) => {
  const generation = await commitDocs(index);
  await pool.warm(['web']);
  const searcher = pool.searcher('web', generation);
  const queries = ['granite', 'marble', 'slate', 'quarries'];
  const totals = await Promise.all(Array.from({ length: 40 }, (_, i) => Promise.resolve(searcher.search(queries[i % 4]!, {})).then((r) => r.total)));
  assert.deepEqual(totals, Array.from({ length: 40 }, (_, i) => [1, 1, 1, 2][i % 4]));
  assert.equal(pool.waiting, 0);
}));

test('the claim board: a task is claimed once, by a worker or refused by the pool, and an old copy cannot claim its cell\'s next task', () => {
  const board = new ClaimBoard();
  const other = new ClaimBoard(board.buffer); // a worker's view of the same memory
  board.open(7);
  assert.equal(board.isOpen(7), true);
  assert.equal(other.claim(7, 1), true);
  assert.equal(board.claim(7, 2), false, 'taken already');
  assert.equal(board.refuse(7), false, 'a claimed task is not refused');
  assert.equal(board.claimedBy(7, 1), true);
  assert.equal(board.claimedBy(7, 2), false);
  assert.equal(board.isOpen(7), false);
  // The next task on the same cell: a worker still holding task 7's copy cannot take it.
  board.open(7 + CLAIM_CELLS);
  assert.equal(other.claim(7, 2), false);
  assert.equal(board.isOpen(7 + CLAIM_CELLS), true);
  assert.equal(board.refuse(7 + CLAIM_CELLS), true);
  assert.equal(other.claim(7 + CLAIM_CELLS, 2), false, 'a refused task is not claimed');
  // Seqs past 2³¹ keep distinct marks on one cell.
  const big = 2 ** 33 + 5;
  board.open(big);
  assert.equal(board.claim(big - CLAIM_CELLS, 3), false);
  assert.equal(board.claim(big, 3), true);
  assert.equal(board.claimedBy(big, 3), true);
});

test('a worker that dies fails its task as an internal error; a new one takes the queue and answers', { timeout: 30_000 }, () => withPool(1, async ({ index, pool }) => {
  const searcher = pool.searcher('web', await commitDocs(index));
  assert.equal((await searcher.search('granite', {})).total, 1);
  // the dying search, and two queued behind it on the one worker
  const dying = Promise.resolve(searcher.search('__exit__', {}));
  const queued = [searcher.search('marble', {}), searcher.search('slate', {})];
  await assert.rejects(dying, (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, 'internal');
    assert.match(err.message, /exited \(3\) while it ran a search task/);
    return true;
  });
  assert.deepEqual((await Promise.all(queued)).map((r) => r.total), [1, 1]);
  // an uncaught error: the task fails with it as its cause
  await assert.rejects(async () => searcher.search('__throw__', {}), (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, 'internal');
    assert.match(err.message, /while it ran a search task: a bug in a search worker/);
    assert.match(String((err.cause as Error).stack), /dying-search-worker/);
    return true;
  });
  assert.equal((await searcher.search('quarries', {})).total, 2);
}, undefined, new URL('../support/dying-search-worker.mjs', import.meta.url)));

test('closing the pool lets the running search finish and refuses the waiting ones as unavailable', () => withPool(1, async ({ index, pool }) => {
  const searcher = pool.searcher('web', index.generation);
  // A search of seconds runs on the one worker (cut at its budget); two wait behind it.
  const outcome = (p: unknown) => Promise.resolve(p).then((r) => r, (err: unknown) => err);
  const running = outcome(searcher.search(SLOW_QUERY, { deadline: Date.now() + 3000 }));
  const waiting = ['omega', 'zeta'].map((q) => outcome(searcher.search(q, {})));
  while (pool.waiting > 2) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(pool.waiting, 2);
  const closed = pool.close();
  assert.equal(pool.waiting, 0);
  // It ends as it would have without the close: cut at its budget (or answered, on a faster machine).
  const ran = await running;
  assert.ok(!QuarryError.is(ran) || /time budget/.test(ran.message), String(ran));
  for (const w of waiting) {
    const err = await w;
    assert.ok(QuarryError.is(err) && err.code === 'unavailable' && /closing/.test(err.message), String(err));
  }
  await closed;
  await assert.rejects(async () => searcher.search('omega', {}), (err: unknown) => QuarryError.is(err) && err.code === 'unavailable');
}, writeSlowCorpus));

test("the caller's deadline (the request timeout) stops a search on the pool as the budget does", () => withPool(1, async ({ index, pool }) => {
  const service = new SearchService(pool.source({ searcher: () => index.searcher() }));
  await assert.rejects(service.search(LOCAL_OPERATOR, { q: SLOW_QUERY, scope: 'web' }, { deadline: Date.now() + 50 }), (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, 'unavailable');
    assert.match(err.message, /time budget/);
    return true;
  });
  // The one worker is free again.
  assert.equal((await service.search(LOCAL_OPERATOR, { q: 'omega', scope: 'web' })).total, 400);
}, writeSlowCorpus));

test('a search that would take seconds is cut at its budget with 503 while other searches are answered', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-pool-'));
  await writeSlowCorpus(indexDir(dataDir, 'web'));
  const config = join(dataDir, 'service.json');
  writeFileSync(config, JSON.stringify({ search: { workers: 2, budgetMs: 1000 } }));
  const srv = await startServer({ dataDir, args: ['--config', config] });
  try {
    const api = connect(srv);
    // Each worker opens the index on its first task: warm both up.
    for (const r of await Promise.all([1, 2, 3, 4].map(() => api.get('/api/search?scope=web&q=omega')))) assert.equal(r.status, 200, JSON.stringify(r.json));
    const slow = api.get(`/api/search?scope=web&q=${encodeURIComponent(SLOW_QUERY)}`);
    const others = Array.from({ length: 6 }, () => api.get('/api/search?scope=web&q=omega'));
    const cut = await slow;
    assert.equal(cut.status, 503);
    assert.equal(cut.json.error.code, 'unavailable');
    assert.match(cut.json.error.message, /time budget/);
    assert.ok(Number(cut.headers['retry-after']) >= 1);
    for (const r of await Promise.all(others)) {
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.total, 400);
    }
    // The worker that ran it is free again: the server goes on answering.
    assert.equal((await api.get('/api/search?scope=web&q=zeta')).status, 200);
  } finally {
    await srv.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the search configuration: one worker per core by default, 0 allowed, anything else refused by name', () => {
  assert.deepEqual(resolveSearchConfig({}), { workers: availableParallelism() });
  assert.deepEqual(resolveSearchConfig({ workers: 0, budgetMs: 250 }), { workers: 0, budgetMs: 250 });
  for (const bad of [{ workers: -1 }, { workers: 1.5 }, { workers: '2' }, { budgetMs: 0 }, { budgetMs: 'soon' }, { threads: 2 }]) {
    assert.throws(() => resolveSearchConfig(bad), (err: unknown) => QuarryError.is(err) && err.code === 'bad_request', JSON.stringify(bad));
  }
});

test('search threads run at a lower priority than the serving thread (Linux: nice is per thread)', { skip: process.platform !== 'linux' && 'a nice value is per process here' }, () => withPool(2, async ({ pool }) => {
  await pool.warm(['web']);
  // field 19 of /proc/<pid>/task/<tid>/stat, counted after the command's closing parenthesis
  const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  const own = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
  const nices = readdirSync('/proc/self/task').map((tid) => niceOf(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')));
  assert.equal(nices.filter((n) => n === Math.min(19, own + SEARCH_THREAD_NICE)).length, 2, `nice values of the process's threads: ${nices.join(' ')} (this thread ${own})`);
}));
