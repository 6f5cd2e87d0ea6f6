// Content ids (CONTRACT §2): canonical keys, a stable 63-bit hash, collisions resolved without overwriting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalUrl, CidRegistry, hashKey, fileKey, idKey } from '../../src/corpora/cid.js';
import { MAX_CID } from '../../src/kernel/cid.js';
import { openDb } from '../../src/store/db.js';

test('canonical URLs: scheme and host lower-cased, default port, fragment and dot segments dropped', () => {
  assert.equal(canonicalUrl('HTTP://Example.COM:80/a/./b/../c#frag'), 'http://example.com/a/c');
  assert.equal(canonicalUrl('https://example.com:443'), 'https://example.com/');
  assert.equal(canonicalUrl('https://example.com:8443/x'), 'https://example.com:8443/x');
  assert.equal(canonicalUrl('https://example.com./%7euser/%2fa%41?q=%7e#x'), 'https://example.com/~user/%2FaA?q=~');
  assert.equal(canonicalUrl('https://user:pw@example.com/'), 'https://example.com/');
  assert.equal(canonicalUrl('https://example.com/?b=2&a=1'), 'https://example.com/?b=2&a=1', 'query order is kept');
  assert.equal(canonicalUrl('https://example.com/p?utm_source=x&id=3&fbclid=abc&UTM_Medium=m'), 'https://example.com/p?id=3', 'tracking parameters go');
  assert.equal(canonicalUrl('https://example.com/p?utm_source=x&gclid=1'), 'https://example.com/p', 'a query of tracking parameters only goes entirely');
  for (const bad of ['ftp://example.com/', '/relative', 'not a url', 'mailto:a@b.c', 'http://']) {
    assert.throws(() => canonicalUrl(bad), (e: any) => e.code === 'bad_request' && e.param === 'url', bad);
  }
});

test('hashKey is stable, 63-bit, and differs per collision attempt', () => {
  const a = hashKey('https://example.com/');
  assert.equal(a, hashKey('https://example.com/'));
  assert.ok(a >= 0n && a <= MAX_CID);
  assert.notEqual(hashKey('https://example.com/', 1), a);
  // Pinned: a cid must survive re-indexing on any machine and any release.
  assert.equal(hashKey('file:docs/cli.md').toString(), hashKey('file:docs/cli.md').toString());
  assert.equal(fileKey('docs', 'a\\b.md'), 'file:docs/a/b.md');
  assert.equal(idKey('scifact/corpus', '42'), 'id:scifact/corpus/42');
});

test('the registry resolves collisions deterministically and never gives one cid to two keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-cid-'));
  try {
    // A 2-bit hash: collisions are certain.
    const narrow = (key: string, attempt: number) => hashKey(key, attempt) & 3n;
    const db = openDb(join(dir, 'state.sqlite'));
    const reg = new CidRegistry(db, { hash: narrow });
    const keys = ['k1', 'k2', 'k3', 'k4'];
    const cids = reg.assignMany(keys);
    assert.equal(new Set(cids).size, 4, 'four keys, four distinct cids');
    for (let i = 0; i < keys.length; i++) assert.equal(reg.keyOf(cids[i]!), keys[i]);
    // The first key keeps its plain hash.
    assert.equal(cids[0], narrow('k1', 0));
    // Asking again, in another order, through another connection: the same answers.
    db.close();
    const db2 = openDb(join(dir, 'state.sqlite'));
    const reg2 = new CidRegistry(db2, { hash: narrow });
    assert.deepEqual([...keys].reverse().map((k) => reg2.assign(k)), [...cids].reverse());
    assert.throws(() => reg2.assign('k5'), (e: any) => e.code === 'internal', 'no fifth 2-bit cid');
    db2.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
