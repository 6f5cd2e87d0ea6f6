/**
 * Bad input is refused with typed errors before it touches the index: invalid cids (BadCidError), a
 * missing or non-string title/text, non-string url/host (BadRequestError naming the field). The
 * refused operation leaves nothing behind — the writer stays usable and the commit holds only the
 * accepted documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuarryError } from '../../../src/kernel/errors.js';
import { checkIndex, Index, toCid } from '../../../src/engine/index/index.js';
import { liveDocuments, tempDir } from './fixtures.js';

const code = (c: string, param?: string) => (err: unknown) => QuarryError.is(err) && err.code === c && (param === undefined || err.param === param);

test('invalid cids are BadCidError; decimal strings are accepted', () => {
  for (const bad of [-1n, 1n << 63n, '', '01', '-1', '1.0', ' 1', '9223372036854775808', '12345678901234567890', 1, null, undefined, {}]) {
    assert.throws(() => toCid(bad), code('bad_cid', 'cid'), String(bad));
  }
  assert.equal(toCid('0'), 0n);
  assert.equal(toCid('9223372036854775807'), (1n << 63n) - 1n);
  assert.equal(toCid(42n), 42n);
});

test('refused documents leave the writer usable and the index unchanged', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  w.upsert({ cid: 1n, title: 'good', text: 'kept' });
  const bad: [unknown, string, string][] = [
    [{ cid: 'x', title: 't', text: 'x' }, 'bad_cid', 'cid'],
    [{ cid: -5n, title: 't', text: 'x' }, 'bad_cid', 'cid'],
    [{ cid: 2n, title: 7, text: 'x' }, 'bad_request', 'title'],
    [{ cid: 2n, text: 'x' }, 'bad_request', 'title'],
    [{ cid: 2n, title: 't', text: null }, 'bad_request', 'text'],
    [{ cid: 2n, title: 't', text: 'x', url: 5 }, 'bad_request', 'url'],
    [{ cid: 2n, title: 't', text: 'x', host: ['a'] }, 'bad_request', 'host'],
    [null, 'bad_request', 'doc'],
    ['doc', 'bad_request', 'doc'],
  ];
  for (const [doc, c, param] of bad) assert.throws(() => w.upsert(doc as never), code(c, param), JSON.stringify(doc, (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
  assert.throws(() => w.delete('01' as never), code('bad_cid'));
  assert.equal(w.pending, 1);
  w.upsert({ cid: '3' as never, title: 'string cid', text: 'fine', url: null as never });
  await w.commit();
  assert.deepEqual(liveDocuments(index), new Map([[1n, { title: 'good', text: 'kept' }], [3n, { title: 'string cid', text: 'fine' }]]));
  assert.ok(checkIndex(dir).ok);
  await w.close();
  await index.close();
});

test('bad options are refused with the option named', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(Index.open(dir, { mergeFactor: 1 }), code('bad_request', 'mergeFactor'));
  await assert.rejects(Index.open(dir, { maxMergeAtOnce: 1 }), code('bad_request', 'maxMergeAtOnce'));
  await assert.rejects(Index.open(dir, { threadBytes: -1 }), code('bad_request', 'threadBytes'));
  await assert.rejects(Index.open(dir, { threadBytes: 0.5 }), code('bad_request', 'threadBytes'));
  await assert.rejects(Index.open(dir, { buildThreads: -1 }), code('bad_request', 'buildThreads'));
  await assert.rejects(Index.open(dir, { buildThreads: 65 }), code('bad_request', 'buildThreads'));
  await assert.rejects(Index.open(dir, { storedQuality: 12 }), code('bad_request', 'storedQuality'));
});
