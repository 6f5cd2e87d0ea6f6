// The contract is guarded: the committed descriptor set and generated TypeScript are what
// `npm run contract:generate` makes from contract/quarry/v1/*.proto (so nobody edits one without the
// other), `buf breaking` finds nothing between the sources and the released set, and it does fail on a
// breaking change (a renumbered field, a removed method, a changed type) made to a copy of the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/server.js';

const BUF = join(REPO_ROOT, 'node_modules/.bin/buf');
const CONTRACT = join(REPO_ROOT, 'contract');
const RELEASED = join(CONTRACT, 'released/quarry.v1.binpb');

function buf(args: string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync(BUF, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test('the committed descriptor set and generated TypeScript match the .proto sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-contract-'));
  try {
    const built = join(dir, 'set.binpb');
    const b = buf(['build', '--as-file-descriptor-set', '-o', built], CONTRACT);
    assert.equal(b.status, 0, b.out);
    assert.ok(readFileSync(built).equals(readFileSync(join(CONTRACT, 'quarry.v1.binpb'))), 'contract/quarry.v1.binpb is stale: run npm run contract:generate');
    const template = join(dir, 'buf.gen.yaml');
    writeFileSync(template, readFileSync(join(CONTRACT, 'buf.gen.yaml'), 'utf8')
      .replace('../node_modules/.bin/protoc-gen-es', join(REPO_ROOT, 'node_modules/.bin/protoc-gen-es'))
      .replace('out: ../src/rpc/gen', `out: ${join(dir, 'gen')}`));
    const g = buf(['generate', '--template', template], CONTRACT);
    assert.equal(g.status, 0, g.out);
    const committed = join(REPO_ROOT, 'src/rpc/gen/quarry/v1');
    const files = readdirSync(committed).sort();
    assert.deepEqual(readdirSync(join(dir, 'gen/quarry/v1')).sort(), files);
    for (const f of files) {
      assert.equal(readFileSync(join(dir, 'gen/quarry/v1', f), 'utf8'), readFileSync(join(committed, f), 'utf8'), `src/rpc/gen/quarry/v1/${f} is stale: run npm run contract:generate`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('buf breaking: the sources keep every promise of the released contract', () => {
  const r = buf(['breaking', '.', '--against', RELEASED], CONTRACT);
  assert.equal(r.status, 0, r.out);
});

test('buf breaking fails on a breaking change', () => {
  const changes: [string, (s: string) => string, RegExp][] = [
    ['a renumbered field', (s) => s.replace('uint32 page = 3;', 'uint32 page = 4;'), /page/],
    ['a removed method', (s) => s.replace(/  \/\/ Completions of the last term[\s\S]*?rpc Suggest[\s\S]*?\n  \}\n/, ''), /Suggest/],
    ['a changed field type', (s) => s.replace('int64 score = 2;', 'string score = 2;'), /score/],
  ];
  for (const [what, edit, mentions] of changes) {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-contract-break-'));
    try {
      cpSync(CONTRACT, dir, { recursive: true });
      const file = join(dir, 'quarry/v1/search.proto');
      const before = readFileSync(file, 'utf8');
      const after = edit(before);
      assert.notEqual(after, before, `${what}: the edit applies`);
      writeFileSync(file, after);
      const r = buf(['breaking', '.', '--against', RELEASED], dir);
      assert.notEqual(r.status, 0, `${what} passed buf breaking:\n${r.out}`);
      assert.match(r.out, mentions, what);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
