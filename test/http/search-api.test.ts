// Black-box tests of the public search interface (interface §4.1–4.3, CONTRACT §1–2): real HTTPS requests
// to a real `quarry serve` process over the fixture corpus, every response checked against the served
// OpenAPI document. Every parameter, field, error identifier and limit of search, doc and suggest.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type TestClient, type TestResponse } from '../support/client.js';
import { startServer, type TestServer } from '../support/server.js';
import { FIXTURE, writeFixtureCorpus } from '../support/fixture-corpus.js';

let srv: TestServer;
let api: TestClient;
before(async () => {
  srv = await startServer({ setup: writeFixtureCorpus });
  api = connect(srv);
});
after(async () => {
  api?.close();
  const r = await srv?.stop();
  assert.equal(r?.code, 0);
});

function assertError(res: TestResponse, status: number, code: string, param?: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.v, 1);
  assert.equal(res.json.error.code, code, res.text);
  assert.equal(typeof res.json.error.message, 'string');
  assert.ok(res.json.error.message.length > 0);
  if (param !== undefined) assert.equal(res.json.error.param, param, res.text);
}

const enc = encodeURIComponent;
const search = (q: string, extra = '') => api.get(`/api/search?q=${enc(q)}${extra}`);

describe('GET /api/search', () => {
  test('every field of a response: v, query, scope, page, total, nresults, results', async () => {
    const r = await search('granite');
    assert.equal(r.status, 200);
    const b = r.json;
    assert.equal(b.v, 1);
    assert.equal(b.query, 'granite');
    assert.equal(b.scope, 'own');
    assert.equal(b.page, 0);
    assert.equal(b.total, FIXTURE.graniteOwn);
    assert.equal(b.nresults, 20);
    assert.equal(b.results.length, 20);
    assert.equal('did_you_mean' in b, false);
    assert.equal('phrase_exact' in b, false, 'phrase_exact only when q has a phrase');
    for (const hit of b.results) {
      assert.match(hit.cid, /^(0|[1-9][0-9]{0,18})$/);
      assert.ok(BigInt(hit.cid) <= (1n << 63n) - 1n);
      assert.ok(Number.isInteger(hit.score) && hit.score > 0);
      assert.match(hit.title, /^Granite note \d\d$/);
      assert.equal(hit.doc, `/api/doc?cid=${hit.cid}`);
      assert.equal(typeof hit.snippet, 'string');
      assert.ok(hit.snippet.length <= 240);
      assert.doesNotMatch(hit.snippet, /<[a-z/]/i, 'snippets are plain text');
      assert.match(hit.snippet, /granite/i);
    }
  });

  test('order: score descending, then cid ascending; the same query gives the same order', async () => {
    const a = (await search('granite')).json.results;
    for (let i = 1; i < a.length; i++) {
      const [p, c] = [a[i - 1], a[i]];
      assert.ok(p.score > c.score || (p.score === c.score && BigInt(p.cid) < BigInt(c.cid)), `${i}: ${JSON.stringify([p, c])}`);
    }
    const again = (await search('granite')).json.results;
    assert.deepEqual(again, a);
  });

  test('pagination: 20 per page, exact total, no overlap, a page past the end is empty with the right total', async () => {
    const seen = new Set<string>();
    const sizes: number[] = [];
    for (let page = 0; page <= 3; page++) {
      const b = (await search('granite', `&page=${page}`)).json;
      assert.equal(b.page, page);
      assert.equal(b.total, FIXTURE.graniteOwn);
      assert.equal(b.nresults, b.results.length);
      sizes.push(b.nresults);
      for (const h of b.results) {
        assert.ok(!seen.has(h.cid), `cid ${h.cid} on two pages`);
        seen.add(h.cid);
      }
    }
    assert.deepEqual(sizes, [20, 20, 5, 0]);
    assert.equal(seen.size, FIXTURE.graniteOwn);
    const last = (await search('granite', '&page=499')).json;
    assert.deepEqual([last.page, last.total, last.nresults, last.results], [499, FIXTURE.graniteOwn, 0, []]);
  });

  test('scopes: absent is own, web and trusted search their corpora; results carry url, host and a scoped doc path', async () => {
    const web = (await search('granite', '&scope=web')).json;
    assert.equal(web.scope, 'web');
    assert.equal(web.total, 3);
    for (const h of web.results) {
      assert.equal(h.doc, `/api/doc?cid=${h.cid}&scope=web`);
      assert.match(h.url, /^https:\/\//);
      assert.equal(h.host, new URL(h.url).hostname);
    }
    const trusted = (await search('granite', '&scope=trusted')).json;
    assert.equal(trusted.scope, 'trusted');
    assert.equal(trusted.total, 1);
    assert.equal(trusted.results[0].url, FIXTURE.trusted[0].url);
    assert.equal(trusted.results[0].doc, `/api/doc?cid=${trusted.results[0].cid}&scope=trusted`);
    assert.equal((await search('basalt')).json.total, 0, 'web documents are not in the own corpus');
  });

  test('query language: OR by default, +required, -excluded, phrases, site: by dot-suffix, stemming', async () => {
    assert.equal((await search('elephant fox')).json.total, FIXTURE.elephantOwn + 1);
    assert.equal((await search('+elephant +savanna')).json.total, FIXTURE.elephantOwn);
    assert.equal((await search('+brown -fox')).json.total, 1);
    assert.equal((await search('granite -granite')).json.total, 0);
    assert.deepEqual((await search('-granite')).json.results, [], 'only excluded clauses match nothing');
    const sites = (await search('granite site:example.com', '&scope=web')).json;
    assert.deepEqual(sites.results.map((h: { host: string }) => h.host).sort(), ['docs.example.com', 'example.com']);
    const notSub = (await search('granite -site:docs.example.com', '&scope=web')).json;
    assert.equal(notSub.total, 2);
    assert.equal((await search('elephants walking')).json.total, FIXTURE.elephantOwn, 'stemmed: elephants → elephant, walking → walk');
  });

  test('phrase_exact: true when the phrase matches, false when it was relaxed to its terms; absent without a phrase', async () => {
    const exact = (await search('"quick brown fox"')).json;
    assert.equal(exact.phrase_exact, true);
    assert.equal(exact.total, 1);
    assert.equal(exact.results[0].title, 'The fox');
    const relaxed = (await search('"brown quick dog"')).json;
    assert.equal(relaxed.phrase_exact, false);
    assert.ok(relaxed.total >= 1);
    const unmatched = (await search('"quick brown')).json; // an unmatched quote runs to the end
    assert.equal(unmatched.phrase_exact, true);
    assert.equal(unmatched.total, 1);
  });

  test('did_you_mean: present for a misspelling that the correction improves, absent otherwise', async () => {
    const r = (await search('elephnt')).json;
    assert.equal(r.total, 0);
    assert.equal(r.did_you_mean, 'elephant');
    const plus = (await search('+elephnt')).json;
    assert.equal(plus.did_you_mean, '+elephant', 'operators are kept as written');
    assert.equal('did_you_mean' in (await search('elephant')).json, false);
  });

  test('q: missing, empty, whitespace-only or over 4,096 bytes → 400 bad_query (param q); any number of clauses', async () => {
    assertError(await api.get('/api/search'), 400, 'bad_query', 'q');
    assertError(await api.get('/api/search?q='), 400, 'bad_query', 'q');
    assertError(await api.get('/api/search?q=%20%09%20'), 400, 'bad_query', 'q');
    assertError(await search('a'.repeat(4097)), 400, 'bad_query', 'q');
    assertError(await search('é'.repeat(2049)), 400, 'bad_query', 'q'); // 4,098 bytes, 2,049 characters
    assert.equal((await search('a'.repeat(4096))).status, 200);
    const clauses = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`).join(' ');
    const long = await search(`granite ${clauses(300)}`);
    assert.equal(long.status, 200, 'a pasted paragraph of 301 clauses is answered');
    assert.ok(long.json.total > 0, 'and its rare term still matches');
  });

  test('scope: anything but web, trusted or absent → 400 bad_scope (param scope)', async () => {
    for (const s of ['own', '', 'WEB', 'Web', 'all', 'web ', 'trusted,web']) {
      assertError(await search('granite', `&scope=${enc(s)}`), 400, 'bad_scope', 'scope');
    }
  });

  test('page: not a base-10 integer ≥ 0, or page×20 ≥ 10,000 → 400 bad_page (param page)', async () => {
    for (const p of ['-1', 'abc', '1.5', '', '+1', '1e2', '0x10', ' 1', '500', '10000', '99999999999999999999']) {
      assertError(await search('granite', `&page=${enc(p)}`), 400, 'bad_page', 'page');
    }
    assert.equal((await search('granite', '&page=499')).status, 200);
  });

  test('repeated parameters: the first wins; unknown parameters are ignored', async () => {
    const r = (await api.get('/api/search?q=elephant&q=granite&scope=web&scope=trusted&page=0&page=9&utm_source=x')).json;
    assert.equal(r.query, 'elephant');
    assert.equal(r.scope, 'web');
    assert.equal(r.page, 0);
  });

  test('HTTP/1.1 answers the same as HTTP/2; HEAD has no body; other methods → 405 with Allow', async () => {
    const h2 = await search('granite');
    const h1 = await api.get('/api/search?q=granite', { protocol: 'h1' });
    assert.deepEqual(h1.json, h2.json);
    const head = await api.request('HEAD', '/api/search?q=granite');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await api.request(m, '/api/search?q=granite');
      assertError(r, 405, 'method_not_allowed');
      assert.equal(r.headers.allow, 'GET, HEAD');
    }
  });
});

describe('GET /api/doc', () => {
  test('a found document: v, found, cid, url, title, truncated, text', async () => {
    const hit = (await search('granite', '&scope=web')).json.results.find((h: { url: string }) => h.url === FIXTURE.web[0].url);
    const r = await api.get(hit.doc);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, {
      v: 1, found: true, cid: hit.cid, url: FIXTURE.web[0].url, title: FIXTURE.web[0].title, truncated: false, text: FIXTURE.web[0].text,
    });
    const own = (await search('"quick brown fox"')).json.results[0];
    const d = (await api.get(own.doc)).json;
    assert.equal(d.found, true);
    assert.equal(d.title, 'The fox');
    assert.match(d.text, /quick brown fox/);
  });

  test('text over 1 MiB is cut on a character boundary and marked truncated', async () => {
    const hit = (await search('huge', '&scope=web')).json.results[0];
    assert.ok(hit, 'the huge page is searchable');
    const d = (await api.get(hit.doc)).json;
    assert.equal(d.truncated, true);
    const bytes = Buffer.byteLength(d.text, 'utf8');
    assert.ok(bytes <= 1024 * 1024 && bytes >= 1024 * 1024 - 3, `${bytes} bytes`);
    assert.ok(FIXTURE.hugeText.startsWith(d.text), 'a prefix of the stored text, no replacement characters');
  });

  test('an unknown cid → 404 not_found with found: false and the cid', async () => {
    for (const cid of ['1', '0', '9223372036854775807']) {
      const r = await api.get(`/api/doc?cid=${cid}`);
      assertError(r, 404, 'not_found');
      assert.equal(r.json.found, false);
      assert.equal(r.json.cid, cid);
    }
    const web = (await search('granite', '&scope=web')).json.results[0];
    assertError(await api.get(`/api/doc?cid=${web.cid}`), 404, 'not_found'); // a web cid is not in own
    assertError(await api.get(`/api/doc?cid=${web.cid}&scope=trusted`), 404, 'not_found');
  });

  test('a malformed cid → 400 bad_cid (param cid)', async () => {
    for (const c of ['', 'abc', '01', '00', '-1', '+1', '1.0', ' 1', '1 ', '0x1', '9223372036854775808', '18446744073709551615', '12345678901234567890', '١٢٣']) {
      assertError(await api.get(`/api/doc?cid=${enc(c)}`), 400, 'bad_cid', 'cid');
    }
    assertError(await api.get('/api/doc'), 400, 'bad_cid', 'cid');
  });

  test('scope: web and trusted, or absent; anything else → 400 bad_scope', async () => {
    const t = (await search('granite', '&scope=trusted')).json.results[0];
    assert.equal((await api.get(`/api/doc?cid=${t.cid}&scope=trusted`)).json.url, FIXTURE.trusted[0].url);
    for (const s of ['own', '', 'x']) assertError(await api.get(`/api/doc?cid=1&scope=${enc(s)}`), 400, 'bad_scope', 'scope');
  });
});

describe('GET /api/suggest', () => {
  test('completes the last token from the corpus terms, echoing the prefix as submitted', async () => {
    const r = await api.get(`/api/suggest?q=${enc('the Eleph')}`);
    assert.equal(r.status, 200);
    assert.equal(r.json.prefix, 'the Eleph');
    assert.ok(Array.isArray(r.json.suggestions));
    assert.ok(r.json.suggestions.includes('elephant'), JSON.stringify(r.json));
    for (const s of r.json.suggestions) assert.ok(s.startsWith('eleph'), s);
  });

  test('at most 10 suggestions, by document frequency then alphabetically', async () => {
    const r = (await api.get('/api/suggest?q=n')).json;
    assert.ok(r.suggestions.length <= 10);
    assert.equal(r.suggestions[0], 'note', 'in 45 documents');
  });

  test('scopes: web and trusted complete from their own terms', async () => {
    assert.ok((await api.get('/api/suggest?q=basa&scope=web')).json.suggestions.includes('basalt'));
    assert.deepEqual((await api.get('/api/suggest?q=basa')).json.suggestions, []);
    assert.ok((await api.get('/api/suggest?q=refer&scope=trusted')).json.suggestions.includes('reference'));
    for (const s of ['own', '', 'x']) assertError(await api.get(`/api/suggest?q=a&scope=${enc(s)}`), 400, 'bad_scope', 'scope');
  });

  test('q missing, empty or whitespace → 400 bad_query', async () => {
    assertError(await api.get('/api/suggest'), 400, 'bad_query', 'q');
    assertError(await api.get('/api/suggest?q='), 400, 'bad_query', 'q');
    assertError(await api.get('/api/suggest?q=%20%20'), 400, 'bad_query', 'q');
  });
});

describe('limits and errors common to every endpoint', () => {
  test('unknown paths → 404 not_found', async () => {
    assertError(await api.get('/api/nothing'), 404, 'not_found');
    assertError(await api.get('/api/search/'), 404, 'not_found');
  });

  test('a body over 1 MiB → 413 payload_too_large', async () => {
    const r = await api.post('/api/auth/login/start', Buffer.alloc(1024 * 1024 + 1, 0x20), { headers: { 'content-type': 'application/json' } });
    assertError(r, 413, 'payload_too_large');
  });

  test('headers over 16 KiB → 431 with a JSON error body', async () => {
    for (const protocol of ['h2', 'h1'] as const) {
      const r = await api.get('/api/search?q=granite', { protocol, headers: { 'x-fill': 'a'.repeat(17 * 1024) } });
      assertError(r, 431, 'bad_request');
    }
  });

  test('an invalid capability → 401 unauthenticated with WWW-Authenticate, even where anonymous callers may search', async () => {
    const r = await api.get('/api/search?q=granite', { headers: { authorization: 'Bearer not-a-capability' } });
    assertError(r, 401, 'unauthenticated');
    assert.match(r.headers['www-authenticate'] ?? '', /^Bearer/);
  });
});

test('rate limit: past the burst, 429 rate_limited with Retry-After', async () => {
  const limited = await startServer({ rateLimit: { perSecond: 0.001, burst: 5 } });
  const c = connect(limited, { validate: false }); // fetching the OpenAPI document would spend a token
  try {
    const statuses: number[] = [];
    let refused: TestResponse | undefined;
    for (let i = 0; i < 8; i++) {
      const r = await c.get('/api/suggest?q=a');
      statuses.push(r.status);
      if (r.status === 429) refused ??= r;
    }
    assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    assert.ok(refused, `no 429 among ${statuses}`);
    assertError(refused!, 429, 'rate_limited');
    assert.match(refused!.headers['retry-after'] ?? '', /^[1-9][0-9]*$/);
  } finally {
    c.close();
    await limited.stop();
  }
});
