// While an index cannot be served, its endpoints answer 503 unavailable with Retry-After and everything
// else keeps working: a damaged index (here a file where the web index directory should be) must not
// crash the server or take the other corpora down. Parameter errors still come first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '../support/client.js';
import { startServer } from '../support/server.js';

test('a damaged web index: web search, doc and suggest answer 503 with Retry-After; own keeps serving', async () => {
  const srv = await startServer({
    setup: (dataDir) => {
      mkdirSync(join(dataDir, 'index'), { recursive: true });
      writeFileSync(join(dataDir, 'index', 'web'), 'not an index directory');
    },
  });
  const api = connect(srv);
  try {
    for (const path of ['/api/search?q=granite&scope=web', '/api/doc?cid=1&scope=web', '/api/suggest?q=gra&scope=web']) {
      const r = await api.get(path);
      assert.equal(r.status, 503, `${path}: ${r.text}`);
      assert.equal(r.json.error.code, 'unavailable');
      assert.match(r.headers['retry-after'] ?? '', /^[1-9][0-9]*$/);
    }
    assert.equal((await api.get('/api/search?q=granite')).status, 200);
    assert.equal((await api.get('/api/search?q=granite&scope=trusted')).status, 200);
    assert.equal((await api.get('/api/search?q=&scope=web')).json.error.code, 'bad_query');
    assert.equal((await api.get('/api/doc?cid=01&scope=web')).json.error.code, 'bad_cid');
    assert.equal((await api.get('/api/openapi.json')).status, 200);
  } finally {
    api.close();
    assert.equal((await srv.stop()).code, 0);
  }
});
