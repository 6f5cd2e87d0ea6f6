// The CLI and REST faces answer a search, a document fetch and a completion through the same service and
// the same serializer: `quarry search|doc|suggest --json` prints exactly the bytes of the REST body (plus
// the newline that ends a JSON line), and both validate against the served OpenAPI schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { connect } from '../support/client.js';
import { FIXTURE, writeFixtureCorpus } from '../support/fixture-corpus.js';
import { REPO_ROOT, startServer } from '../support/server.js';

function quarryJson(dataDir: string, args: string[]): { code: number | null; stdout: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), ...args, '--data', dataDir, '--json'], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, maxBuffer: 16 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout };
}

test('quarry search/doc/suggest --json print the REST body byte for byte', async () => {
  const srv = await startServer({ setup: writeFixtureCorpus });
  const api = connect(srv); // validates every REST answer against /api/openapi.json
  try {
    const cases: { rest: string; cli: string[]; status: number }[] = [
      { rest: '/api/search?q=granite', cli: ['search', 'granite'], status: 200 },
      { rest: '/api/search?q=granite&page=1', cli: ['search', '--page', '1', 'granite'], status: 200 },
      { rest: '/api/search?q=%22quarry+stones%22+-elephant', cli: ['search', '"quarry stones" -elephant'], status: 200 },
      { rest: '/api/search?q=granit', cli: ['search', 'granit'], status: 200 },
      { rest: '/api/search?q=granite+site%3Aexample.com&scope=web', cli: ['search', '--corpus', 'web', 'granite site:example.com'], status: 200 },
      { rest: '/api/search?q=zzzzunknown', cli: ['search', 'zzzzunknown'], status: 200 },
      { rest: '/api/suggest?q=gra', cli: ['suggest', 'gra'], status: 200 },
      { rest: '/api/suggest?q=bas&scope=web', cli: ['suggest', '--corpus', 'web', 'bas'], status: 200 },
      { rest: '/api/doc?cid=42&scope=web', cli: ['doc', '--corpus', 'web', '42'], status: 404 },
    ];
    // Documents found by a search: one of the own corpus, the huge web page (cut at 1 MiB on both faces).
    const own = await api.get('/api/search?q=elephant');
    const huge = await api.get(`/api/search?q=huge&scope=web`);
    const hugeHit = (huge.json.results as { cid: string; url?: string }[]).find((r) => r.url === FIXTURE.hugeUrl);
    assert.ok(hugeHit, 'the huge fixture page is found');
    cases.push(
      { rest: `/api/doc?cid=${own.json.results[0].cid}`, cli: ['doc', own.json.results[0].cid], status: 200 },
      { rest: `/api/doc?cid=${hugeHit.cid}&scope=web`, cli: ['doc', '--corpus', 'web', hugeHit.cid], status: 200 },
    );
    for (const c of cases) {
      const rest = await api.get(c.rest);
      assert.equal(rest.status, c.status, `${c.rest}: ${rest.text.slice(0, 200)}`);
      const cli = quarryJson(srv.dataDir, c.cli);
      assert.equal(cli.code, c.status === 200 ? 0 : 1, `quarry ${c.cli.join(' ')} exit code`);
      assert.ok(cli.stdout === `${rest.text}\n`, `quarry ${c.cli.join(' ')} --json differs from GET ${c.rest}:\n${cli.stdout.slice(0, 300)}\n${rest.text.slice(0, 300)}`);
    }
    const cut = await api.get(`/api/doc?cid=${hugeHit.cid}&scope=web`);
    assert.equal(cut.json.truncated, true, 'the 1 MiB cut applies on both faces');
  } finally {
    api.close();
    await srv.stop();
  }
});
