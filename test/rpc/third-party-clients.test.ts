// Clients that share no code with Quarry speak the binary RPC from the served contract alone:
//   - Python `protobuf` (Debian python3-protobuf) loads the FileDescriptorSet of GET /api/rpc.contract,
//     builds message classes at run time, posts a binary `Call` to POST /api/rpc and decodes the answer:
//     search, doc, suggest, an error, deploy status and one control operation (build);
//   - Debian `protoc --encode/--decode --descriptor_set_in` and `curl` round-trip a search through the
//     `Call` envelope;
//   - `buf curl --schema` calls a Connect path for a search and for an error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { REPO_ROOT, startServer, type TestServer } from '../support/server.js';
import { mintCap, prepare, startControlServer } from '../control/server-support.js';

const PYTHON = '/usr/bin/python3'; // Debian's, where python3-protobuf installs
const PY_CLIENT = fileURLToPath(new URL('./python-client.py', import.meta.url));
const BUF = join(REPO_ROOT, 'node_modules/.bin/buf');

let search: TestServer;
let control: TestServer;
let dir: string;
let cap: string;
let setFile: string;

function run(cmd: string, args: string[], input?: Buffer | string): { status: number | null; stdout: Buffer; stderr: string } {
  const r = spawnSync(cmd, args, { input, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${cmd} could not run (${r.error.message}); scripts/system-deps.sh installs it`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-rpc-3p-'));
  const s = prepare(dir);
  cap = mintCap(s.dataDir);
  [search, control] = await Promise.all([startServer({ setup: writeFixtureCorpus }), startControlServer(s)]);
  setFile = join(dir, 'quarry.binpb');
  const got = run('curl', ['-sS', '--fail', '--cacert', search.certFile, '-o', setFile, `${search.url}/api/rpc.contract`]);
  assert.equal(got.status, 0, got.stderr);
});
after(async () => {
  await Promise.all([search?.stop(), control?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

function python(srv: TestServer, procedure: string, request: unknown, withCap = false): { status: number; rpc_contract: string; etag: string; answer: any } {
  const r = run(PYTHON, [PY_CLIENT, srv.url, srv.certFile, withCap ? cap : '-', procedure, JSON.stringify(request)]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.toString());
}

test('Python protobuf with no generated code: search, doc, suggest, an error, deploy status and a build', () => {
  const s = python(search, 'quarry.v1.SearchService/Search', { q: 'granite', scope: 'SCOPE_WEB' });
  assert.equal(s.status, 200);
  assert.equal(`"${s.rpc_contract}"`, s.etag, 'Rpc-Contract is the hash the contract ETag names');
  assert.equal(s.answer.scope, 'SCOPE_WEB');
  assert.equal(s.answer.total, '3');
  const hit = s.answer.results.find((r: any) => r.host === 'example.com');
  assert.match(hit.cid, /^[0-9]+$/);
  const d = python(search, 'quarry.v1.SearchService/GetDoc', { cid: hit.cid, scope: 'SCOPE_WEB' });
  assert.equal(d.status, 200);
  assert.equal(d.answer.url, 'https://example.com/granite');
  assert.match(d.answer.text, /Granite rocks/);
  const g = python(search, 'quarry.v1.SearchService/Suggest', { q: 'gra' });
  assert.deepEqual(g.answer.suggestions, ['granite']);
  const e = python(search, 'quarry.v1.SearchService/Search', { q: '' });
  assert.equal(e.status, 400);
  assert.equal(e.answer.code, 'invalid_argument');

  const st = python(control, 'quarry.v1.ControlService/GetDeployStatus', { target: 'sites' }, true);
  assert.equal(st.status, 200);
  assert.equal(st.answer.targets[0].target, 'sites');
  assert.match(st.answer.targets[0].verdict, /^VERDICT_/);
  const b = python(control, 'quarry.v1.ControlService/Build', { target: 'sites', idempotency_key: 'py-1' }, true);
  assert.equal(b.status, 200);
  assert.equal(b.answer.kind, 'OPERATION_KIND_BUILD');
  assert.match(b.answer.op_id, /\S/);
  const denied = python(control, 'quarry.v1.ControlService/Build', { target: 'sites' });
  assert.equal(denied.status, 401);
  assert.equal(denied.answer.code, 'unauthenticated');
});

/** Text-format bytes literal: every byte octal-escaped. */
function textBytes(b: Buffer): string {
  return [...b].map((x) => `\\${x.toString(8).padStart(3, '0')}`).join('');
}

test('protoc --encode/--decode with the served descriptor set round-trips a search through curl', () => {
  const protoc = (args: string[], input: Buffer | string) => {
    const r = run('protoc', [`--descriptor_set_in=${setFile}`, ...args, 'quarry/v1/search.proto', 'quarry/v1/call.proto'], input);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  const request = protoc(['--encode=quarry.v1.SearchRequest'], 'q: "granite"\nscope: SCOPE_WEB\n');
  const call = protoc(['--encode=quarry.v1.Call'], `procedure: "quarry.v1.SearchService/Search"\nmessage: "${textBytes(request)}"\n`);
  const posted = run('curl', ['-sS', '--fail', '--cacert', search.certFile, '-H', 'Content-Type: application/proto', '--data-binary', '@-', `${search.url}/api/rpc`], call);
  assert.equal(posted.status, 0, posted.stderr);
  const text = protoc(['--decode=quarry.v1.SearchResponse'], posted.stdout).toString();
  assert.match(text, /^query: "granite"$/m);
  assert.match(text, /^scope: SCOPE_WEB$/m);
  assert.match(text, /^total: 3$/m);
  assert.match(text, /host: "example.com"/);
  assert.match(text, /score: [1-9][0-9]*/);
});

test('buf curl --schema against the Connect paths: a search and an error', () => {
  const url = `${search.url}/api/rpc/quarry.v1.SearchService/Search`;
  const ok = run(BUF, ['curl', '--schema', setFile, '--cacert', search.certFile, '--data', '{"q": "granite", "scope": "SCOPE_WEB"}', url]);
  assert.equal(ok.status, 0, ok.stderr);
  const answer = JSON.parse(ok.stdout.toString());
  assert.equal(answer.total, '3');
  assert.equal(answer.results.length, 3);
  const bad = run(BUF, ['curl', '--schema', setFile, '--cacert', search.certFile, '--data', '{"q": "granite", "page": 9999}', url]);
  assert.notEqual(bad.status, 0);
  const err = JSON.parse(bad.stderr.slice(bad.stderr.indexOf('{')));
  assert.equal(err.code, 'invalid_argument');
  assert.match(err.message, /deep-paging bound/);
  assert.equal(err.details[0].type, 'quarry.v1.ErrorDetail');
  // buf curl prints the detail's value as base64 of the binary quarry.v1.ErrorDetail.
  assert.match(Buffer.from(err.details[0].value, 'base64').toString('latin1'), /bad_page/);
});
