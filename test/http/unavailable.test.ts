// While the indexes cannot be served — not open yet, or failed to open — search, doc and suggest answer
// 503 unavailable with Retry-After, and everything else keeps working. A broken index directory (here:
// a file where the own index directory should be) must not crash the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '../support/client.js';
import { startServer } from '../support/server.js';

test('search, doc and suggest answer 503 unavailable with Retry-After when the indexes cannot be opened', async () => {
  const srv = await startServer({
    waitFor: 'listening',
    setup: (dataDir) => {
      mkdirSync(join(dataDir, 'index'), { recursive: true });
      writeFileSync(join(dataDir, 'index', 'own'), 'not a directory');
    },
  });
  const api = connect(srv);
  try {
    await srv.waitForEvent('degraded', { past: true });
    for (const path of ['/api/search?q=granite', '/api/search?q=granite&scope=web', '/api/doc?cid=1', '/api/suggest?q=gra']) {
      const r = await api.get(path);
      assert.equal(r.status, 503, `${path}: ${r.text}`);
      assert.equal(r.json.error.code, 'unavailable');
      assert.match(r.headers['retry-after'] ?? '', /^[1-9][0-9]*$/);
    }
    // Parameter errors are still reported first: they do not depend on the index.
    assert.equal((await api.get('/api/search?q=')).json.error.code, 'bad_query');
    assert.equal((await api.get('/api/doc?cid=01')).json.error.code, 'bad_cid');
    assert.equal((await api.get('/api/openapi.json')).status, 200);
  } finally {
    api.close();
    assert.equal((await srv.stop()).code, 0);
  }
});
