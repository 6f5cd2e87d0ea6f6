// A typed client generated from the contract (connect-es over connect-node, no Quarry code) calls every
// method of quarry.v1 on a real `quarry serve`: search, doc and suggest over the fixture corpus in both
// codecs and the GET form; the control plane's whole lifecycle with a minted capability (build → stage →
// plan → deploy → verdict → rollback plan → reconcile → restart → operation), idempotency replay, rights;
// capability attenuation; flagging, listing and unflagging a trusted reference; Connect errors carrying Quarry's
// code as a detail; `Connect-Timeout-Ms`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { AuthService } from '../../src/rpc/gen/quarry/v1/auth_pb.js';
import { ErrorDetailSchema } from '../../src/rpc/gen/quarry/v1/call_pb.js';
import { ControlService, OperationKind, OperationState, Verdict } from '../../src/rpc/gen/quarry/v1/control_pb.js';
import { Scope, SearchService } from '../../src/rpc/gen/quarry/v1/search_pb.js';
import { TrustedService, TrustedState } from '../../src/rpc/gen/quarry/v1/trusted_pb.js';
import { FIXTURE, writeFixtureCorpus } from '../support/fixture-corpus.js';
import { startServer, type TestServer } from '../support/server.js';
import { mintCap, prepare, startControlServer } from '../control/server-support.js';
import { connectClient } from './support.js';

let search: TestServer;
let control: TestServer;
let dir: string;
let cap: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-rpc-connect-'));
  const s = prepare(dir);
  cap = mintCap(s.dataDir);
  [search, control] = await Promise.all([startServer({ setup: writeFixtureCorpus }), startControlServer(s)]);
});
after(async () => {
  await Promise.all([search?.stop(), control?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

async function rejects(p: Promise<unknown>, code: Code, quarryCode: string): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    const e = ConnectError.from(err);
    assert.equal(e.code, code, `${e.code} ${e.rawMessage}`);
    assert.equal(e.findDetails(ErrorDetailSchema)[0]?.code, quarryCode);
    return e;
  }
  assert.fail(`expected a ${Code[code]} error`);
}

test('Search, GetDoc and Suggest in the binary and JSON codecs and the GET form', async () => {
  for (const o of [{ binary: true }, { binary: false }, { binary: true, get: true }, { binary: false, get: true }, { binary: true, http1: true }]) {
    const c = connectClient(search, SearchService, o);
    const page0 = await c.search({ q: 'granite' });
    assert.equal(page0.scope, Scope.OWN);
    assert.equal(page0.total, BigInt(FIXTURE.graniteOwn));
    assert.equal(page0.results.length, 20);
    assert.ok(page0.results.every((r) => typeof r.cid === 'bigint' && typeof r.score === 'bigint' && r.score > 0n));
    const page2 = await c.search({ q: 'granite', page: 2 });
    assert.equal(page2.nresults, 5);
    const web = await c.search({ q: 'granite site:example.com', scope: Scope.WEB });
    assert.deepEqual(web.results.map((r) => r.host).sort(), ['docs.example.com', 'example.com']);
    assert.equal((await c.search({ q: 'elephnt' })).didYouMean, 'elephant');
    assert.equal((await c.search({ q: '"quick brown fox"' })).phraseExact, true);

    const doc = await c.getDoc({ cid: web.results.find((r) => r.host === 'example.com')!.cid, scope: Scope.WEB });
    assert.equal(doc.url, 'https://example.com/granite');
    assert.equal(doc.truncated, false);
    const hugeHit = (await c.search({ q: 'huge', scope: Scope.WEB })).results.find((r) => r.url === FIXTURE.hugeUrl)!;
    const huge = await c.getDoc({ cid: hugeHit.cid, scope: Scope.WEB });
    assert.equal(huge.truncated, true);
    assert.ok(Buffer.byteLength(huge.text) <= 1024 * 1024);

    assert.deepEqual((await c.suggest({ q: 'gra' })).suggestions, ['granite']);
    await rejects(c.search({ q: '' }), Code.InvalidArgument, 'bad_query');
    await rejects(c.search({ q: 'granite', page: 500 }), Code.InvalidArgument, 'bad_page');
    await rejects(c.search({ q: 'granite', scope: 9 as Scope }), Code.InvalidArgument, 'bad_scope');
    await rejects(c.getDoc({ cid: 1n << 63n }), Code.InvalidArgument, 'bad_cid');
    const missing = await rejects(c.getDoc({ cid: 42n, scope: Scope.WEB }), Code.NotFound, 'not_found');
    assert.match(missing.rawMessage, /No document with cid 42 in the web corpus/);
  }
});

test('Flag, List and Unflag a trusted reference, as REST /api/trusted does', async () => {
  const anonymous = connectClient(search, TrustedService);
  await rejects(anonymous.list({}), Code.Unauthenticated, 'unauthenticated');
  const t = connectClient(search, TrustedService, { cap: mintCap(search.dataDir, 'trusted.flag,search') });
  const s = connectClient(search, SearchService);
  const basalt = (await s.search({ q: 'basalt', scope: Scope.WEB })).results[0]!;
  const entry = await t.flag({ subject: { case: 'cid', value: basalt.cid }, note: 'the reference on basalt' });
  assert.equal(entry.state, TrustedState.FETCHED, 'a document of the web corpus is copied at once');
  assert.equal(entry.url, 'https://docs.example.com/basalt');
  assert.equal(entry.note, 'the reference on basalt');
  assert.ok(entry.flaggedAt);
  const listed = await t.list({});
  assert.ok(listed.entries.some((e) => e.cid === entry.cid));
  assert.ok((await s.search({ q: 'basalt', scope: Scope.TRUSTED })).results.some((r) => r.cid === entry.cid), 'searchable in the trusted corpus');
  assert.equal((await t.unflag({ cid: entry.cid })).removed, true);
  assert.equal((await t.unflag({ cid: entry.cid })).removed, false, 'a second unflag finds nothing to remove');
  await rejects(t.flag({ subject: { case: 'url', value: 'file:///etc/passwd' } }), Code.InvalidArgument, 'bad_request');
});

test('Connect-Timeout-Ms: an expired deadline is deadline_exceeded; a generous one is met', async () => {
  const c = connectClient(search, SearchService);
  await rejects(c.search({ q: 'granite' }, { headers: { 'connect-timeout-ms': '0' } }), Code.DeadlineExceeded, 'deadline_exceeded');
  assert.equal((await c.search({ q: 'granite' }, { timeoutMs: 60_000 })).total, BigInt(FIXTURE.graniteOwn));
});

async function settle(c: ReturnType<typeof connectClient<typeof ControlService>>, opId: string) {
  for (;;) {
    const op = await c.getOperation({ opId });
    if (op.state === OperationState.SUCCEEDED || op.state === OperationState.FAILED) return op;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the control plane over RPC: inventory, build → stage → plan → deploy → verdict, rollback, reconcile, restart', async () => {
  const c = connectClient(control, ControlService, { cap });
  const anon = connectClient(control, ControlService);
  const inv = await c.getInventory({});
  assert.equal(inv.count, 41);
  assert.equal(inv.targets.length, 41);
  assert.equal(inv.lifecycle?.promote, 'POST /api/deploy');
  assert.ok(inv.generatedAt && inv.generatedAt.seconds > 0n);
  await rejects(anon.getInventory({}), Code.Unauthenticated, 'unauthenticated');
  await rejects(anon.build({ target: 'nope' }), Code.NotFound, 'unknown_target');
  await rejects(anon.build({ target: 'gengw' }), Code.Unauthenticated, 'unauthenticated');

  const b = await c.build({ target: 'gengw', idempotencyKey: 'rpc-build-1' });
  assert.equal(b.kind, OperationKind.BUILD);
  const replay = await c.build({ target: 'gengw', idempotencyKey: 'rpc-build-1' });
  assert.equal(replay.opId, b.opId, 'the same idempotency key replays the first answer');
  const built = await settle(c, b.opId);
  assert.equal(built.state, OperationState.SUCCEEDED, built.log);
  const version = built.version!;

  const staged = await settle(c, (await c.stage({ target: 'gengw', version })).opId);
  assert.equal(staged.state, OperationState.SUCCEEDED, staged.log);
  const plan = await c.deploy({ target: 'gengw', dryRun: true });
  assert.equal(plan.result.case, 'plan');
  assert.equal(plan.result.case === 'plan' && plan.result.value.plan?.to, version);
  const d = await c.deploy({ target: 'gengw', reason: 'rpc test', expectedGeneration: 0n });
  assert.equal(d.result.case, 'accepted');
  const deployed = await settle(c, d.result.case === 'accepted' ? d.result.value.opId : '');
  assert.equal(deployed.state, OperationState.SUCCEEDED, deployed.log);
  const status = await c.getDeployStatus({ target: 'gengw' });
  assert.equal(status.targets.length, 1);
  assert.equal(status.targets[0]!.verdict, Verdict.IN_SYNC);
  assert.equal(status.targets[0]!.live?.version, version);
  assert.equal(status.targets[0]!.generation, 1n);
  assert.equal((await c.getDeployStatus({})).targets.length, 41);
  await rejects(c.deploy({ target: 'gengw', expectedGeneration: 0n }), Code.Aborted, 'conflict');

  await rejects(c.rollback({ target: 'gengw', dryRun: true }), Code.InvalidArgument, 'bad_request');
  const rc = await c.reconcile({ target: 'gengw' });
  assert.equal(rc.kind, OperationKind.RECONCILE);
  await settle(c, rc.opId);
  const rs = await c.restart({ target: 'gengw', reason: 'rpc test' });
  assert.equal(rs.kind, OperationKind.RESTART);
  assert.equal((await settle(c, rs.opId)).state, OperationState.SUCCEEDED);
  await rejects(c.getOperation({ opId: 'op_nope' }), Code.NotFound, 'not_found');
});

test('Attenuate derives a narrower capability that works, and never a wider one', async () => {
  const a = connectClient(control, AuthService, { cap });
  const narrow = await a.attenuate({ rights: { rights: ['mgmt.read'] }, targets: { targets: ['gengw'] }, ttlS: 600 });
  assert.deepEqual(narrow.rights, ['mgmt.read']);
  assert.deepEqual(narrow.targets['mgmt.read']?.targets, ['gengw']);
  assert.ok(narrow.expiresAt);
  const c = connectClient(control, ControlService, { cap: narrow.cap });
  assert.deepEqual((await c.getDeployStatus({})).targets.map((t) => t.target), ['gengw']);
  await rejects(c.build({ target: 'gengw' }), Code.PermissionDenied, 'forbidden');
  const n = connectClient(control, AuthService, { cap: narrow.cap });
  await rejects(n.attenuate({ rights: { rights: ['mgmt.build'] } }), Code.PermissionDenied, 'forbidden');
  await rejects(connectClient(control, AuthService).attenuate({}), Code.Unauthenticated, 'unauthenticated');
});
