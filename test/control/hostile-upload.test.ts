// Hostile uploads: every kind of bad artifact is refused with 400 (413 past the size limit) and leaves
// nothing behind: no release, no artifact, no temp file, no version record, no lock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { QuarryError } from '../../src/kernel/errors.js';
import { fixture, principal, settle, type Fixture } from './support.js';
import { chunks, rawTar, sha256, type RawEntry } from './tarball.js';

let f: Fixture;
const p = principal();
const T = 'sites';
before(async () => { f = await fixture({ uploadLimitBytes: 64 * 1024, artifactLimits: { maxUnpackedBytes: 32 * 1024 } }); });
after(async () => { await f.close(); });

function assertNothingWritten(): void {
  const root = join(f.dataDir, 'control');
  assert.equal(existsSync(join(root, 'releases', T)) && readdirSync(join(root, 'releases', T)).length > 0, false, 'no release');
  assert.deepEqual(readdirSync(join(root, 'artifacts')), [], 'no artifact');
  assert.deepEqual(readdirSync(join(root, 'uploads')), [], 'no temp upload');
  assert.equal(existsSync(join(root, 'live', T)), false, 'no live pointer');
  assert.deepEqual(f.cp.store.listVersions(T), [], 'no version record');
  assert.equal(f.cp.store.getTarget(T).lock_op, null, 'lock released');
}

async function rejects(tar: Buffer, code: string, pattern: RegExp, digest = sha256(tar)): Promise<void> {
  await assert.rejects(f.svc.stageUpload(p, { target: T, digest }, chunks(tar)), (err: unknown) => {
    assert.ok(QuarryError.is(err));
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    return true;
  });
  assertNothingWritten();
}

const good: RawEntry[] = [{ path: 'index.html', body: '<p>ok</p>' }];

test('a ".." path is refused', () => rejects(rawTar([...good, { path: '../evil.txt', body: 'x' }]), 'bad_request', /"\.\." segment/));
test('a ".." segment inside a path is refused', () => rejects(rawTar([...good, { path: 'a/../../evil.txt', body: 'x' }]), 'bad_request', /"\.\." segment/));
test('an absolute path is refused', () => rejects(rawTar([...good, { path: '/tmp/evil.txt', body: 'x' }]), 'bad_request', /absolute/));
test('a symlink leaving the release is refused', () => rejects(rawTar([...good, { path: 'up', type: '2', linkpath: '../../outside' }]), 'bad_request', /leaves the release/));
test('an absolute symlink is refused', () => rejects(rawTar([...good, { path: 'pw', type: '2', linkpath: '/etc/passwd' }]), 'bad_request', /absolute/));
test('a symlink that escapes through another symlink is refused', () => rejects(rawTar([
  ...good, { path: 'x', type: '5', mode: 0o755 }, { path: 's', type: '2', linkpath: '.' }, { path: 't', type: '2', linkpath: 's/x/../..' },
]), 'bad_request', /goes through the symlink s/));
test('an entry written through a symlink is refused', () => rejects(rawTar([
  ...good, { path: 'up', type: '2', linkpath: '.' }, { path: 'up/evil.txt', body: 'x' },
]), 'bad_request', /goes through the symlink up/));
test('a hard link leaving the release is refused', () => rejects(rawTar([...good, { path: 'hl', type: '1', linkpath: '../x' }]), 'bad_request', /hard link/));
test('a hard link to an absolute path is refused', () => rejects(rawTar([...good, { path: 'hl', type: '1', linkpath: '/etc/passwd' }]), 'bad_request', /hard link/));
test('a character device is refused', () => rejects(rawTar([...good, { path: 'dev', type: '3' }]), 'bad_request', /CharacterDevice/));
test('a FIFO is refused', () => rejects(rawTar([...good, { path: 'fifo', type: '6' }]), 'bad_request', /FIFO/));
test('a digest mismatch is refused', () => rejects(rawTar(good), 'bad_request', /digest/, sha256(Buffer.from('something else'))));
test('a malformed digest is refused', () => rejects(rawTar(good), 'bad_request', /sha256/, 'md5:abc'));
test('a body that is not a tar archive is refused', () => rejects(Buffer.from('this is not a tarball at all, just text'.repeat(20)), 'bad_request', /tar archive|empty/));
test('an archive unpacking past the size limit is refused', () => rejects(rawTar([{ path: 'big.bin', body: Buffer.alloc(40 * 1024, 1) }]), 'bad_request', /more than/));
test('a body over the upload limit is 413 and nothing is written', () => rejects(rawTar([{ path: 'huge.bin', body: Buffer.alloc(80 * 1024, 1) }]), 'payload_too_large', /limit/));

test('an unknown target is refused before the body is read', async () => {
  let read = false;
  async function* body(): AsyncIterable<Buffer> { read = true; yield Buffer.from('x'); }
  await assert.rejects(f.svc.stageUpload(p, { target: 'nope', digest: sha256(Buffer.from('x')) }, body()), { code: 'unknown_target' });
  assert.equal(read, false);
});

test('a well-formed upload is staged and can be promoted', async () => {
  const tar = rawTar([{ path: 'assets', type: '5', mode: 0o755 }, { path: 'assets/a.css', body: 'a{}' }, { path: 'index.html', body: '<p>uploaded</p>' }, { path: 'home', type: '2', linkpath: 'index.html' }]);
  const answer = await f.svc.stageUpload(p, { target: T, digest: sha256(tar) }, chunks(tar));
  assert.equal(answer.answer.state, 'queued');
  const op = await settle(f.cp, answer);
  assert.equal(op.state, 'succeeded', JSON.stringify(op.error));
  const dep = await settle(f.cp, await f.svc.deploy(p, { target: T }));
  assert.equal(dep.state, 'succeeded', JSON.stringify(dep.error));
  const [s] = await f.cp.status([T]);
  assert.equal(s!.verdict, 'in_sync', s!.reasons.join());
  assert.equal(s!.live?.digest, sha256(tar));
  assert.equal(f.cp.store.getVersion(T, s!.live!.version)?.origin, 'upload');
});
