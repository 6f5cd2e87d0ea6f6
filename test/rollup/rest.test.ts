// GET /api/maturity over the real server: the same rollup the MCP tool returns, validated against the
// served OpenAPI document; a domain counts its subdomains and never a look-alike; a bad domain is 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '../support/client.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { startServer } from '../support/server.js';

test('GET /api/maturity lists and measures domains', async () => {
  const srv = await startServer({ setup: writeFixtureCorpus });
  const api = connect(srv);
  try {
    const all = await api.get('/api/maturity');
    assert.equal(all.status, 200, all.text);
    assert.equal(all.json.rubric, 'quarry-maturity/1');
    assert.ok(all.json.domains.some((d: { domain: string }) => d.domain === 'example.com'));
    const one = await api.get('/api/maturity?domain=Example.COM');
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.total, 1);
    const d = one.json.domains[0];
    assert.equal(d.domain, 'example.com');
    assert.equal(d.documents.web, 2, 'example.com and docs.example.com, never badexample.com');
    assert.equal(d.fetch_error_rate, null, 'no crawl records: the figure is unknown, not zero');
    const bad = await api.get('/api/maturity?domain=' + encodeURIComponent('http://x'));
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.param, 'domain');
  } finally {
    api.close();
    await srv.stop();
  }
});
