// The maturity rollup's arithmetic: documents per domain (dot-suffix on whole labels, as site:), crawl
// figures weighted by pages fetched per host, the rubric's grades, null figures where nothing was
// measured, and the refusal of a malformed domain. The corpora and crawl records are given as the two
// small sources the service reads (the end-to-end path over a real server is in test/mcp/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RollupService, grade, type HostFetches } from '../../src/rollup/service.js';
import { LOCAL_OPERATOR } from '../../src/kernel/principal.js';
import type { Scope } from '../../src/kernel/scope.js';

const NOW = new Date('2026-11-24T00:00:00Z');
const hosts: Record<Scope, Map<string, number>> = {
  own: new Map(),
  web: new Map([['example.com', 600], ['docs.example.com', 500], ['badexample.com', 7], ['other.org', 12]]),
  trusted: new Map([['docs.example.com', 2]]),
};
const fetches = new Map<string, HostFetches>([
  ['example.com', { fetched: 300, lastSuccessAt: new Date('2026-11-20T00:00:00Z'), errorRate: 0.02, duplicateRate: 0.1 }],
  ['docs.example.com', { fetched: 100, lastSuccessAt: new Date('2026-11-23T12:00:00Z'), errorRate: 0.1, duplicateRate: 0 }],
]);
const service = new RollupService({ hosts: { hosts: (s) => hosts[s] }, crawl: { hosts: () => fetches }, now: () => NOW });

test('a domain counts itself and its subdomains, never a look-alike; crawl rates are weighted by pages fetched', () => {
  const r = service.rollup(LOCAL_OPERATOR, { domain: 'Example.COM.' });
  const d = r.domains[0]!;
  assert.deepEqual(d.documents, { own: 0, web: 1100, trusted: 2, total: 1102 });
  assert.equal(d.trusted_flags, 2);
  assert.equal(d.last_fetch_at, '2026-11-23T12:00:00.000Z');
  assert.equal(d.freshness_s, 12 * 3600);
  assert.equal(d.fetch_error_rate, 0.04, '(0.02×300 + 0.1×100) / 400');
  assert.equal(d.duplicate_rate, 0.075);
  assert.equal(d.grade, 'A', '3 (≥1,000 docs) + 1 (trusted) + 1 (fresh) + 1 (errors ≤ 5 %) = 6');
  assert.equal(r.measured_at, NOW.toISOString());
});

test('without crawl records the figures are null and add nothing; every domain is listed, most documents first', () => {
  const r = service.rollup(LOCAL_OPERATOR, {});
  assert.deepEqual(r.domains.map((d) => d.domain), ['example.com', 'docs.example.com', 'other.org', 'badexample.com']);
  assert.equal(r.total, 4);
  const other = r.domains.find((d) => d.domain === 'other.org')!;
  assert.deepEqual([other.last_fetch_at, other.freshness_s, other.fetch_error_rate, other.duplicate_rate, other.grade], [null, null, null, null, 'E']);
  assert.equal(service.rollup(LOCAL_OPERATOR, { domain: 'nowhere.net' }).domains[0]!.grade, 'F');
});

test('the rubric: stale, failing and duplicated domains lose points', () => {
  const base = { domain: 'x', trusted_flags: 0, last_fetch_at: null, documents: { own: 0, web: 150, trusted: 0, total: 150 } };
  assert.equal(grade({ ...base, freshness_s: null, fetch_error_rate: null, duplicate_rate: null }), 'D');
  assert.equal(grade({ ...base, freshness_s: 100 * 86_400, fetch_error_rate: 0.5, duplicate_rate: 0.9 }), 'F');
});

test('a malformed domain is refused with bad_request naming domain', () => {
  for (const domain of ['', 'a b', 'http://x.com', '-x.com', 7, 'x'.repeat(300)]) {
    assert.throws(() => service.rollup(LOCAL_OPERATOR, { domain }), (e: { code: string; param: string }) => e.code === 'bad_request' && e.param === 'domain', String(domain));
  }
});
