// Graceful life while the own corpus is being indexed on first start: SIGTERM stops the indexing (the
// commit in progress is finished or abandoned, never half-applied) and exits 0; kill -9 at the same
// moment loses nothing a commit had acknowledged; either way the next start over the same data directory
// finishes the corpus and serves every document.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../support/client.js';
import { startServer } from '../support/server.js';

const DOCS = 1500;

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

function makeDataDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-stop-indexing-'));
  dirs.push(dataDir);
  const docs = join(dataDir, 'docs-src');
  mkdirSync(docs);
  for (let i = 0; i < DOCS; i++) {
    writeFileSync(join(docs, `page-${String(i).padStart(5, '0')}.md`), `# Page ${i}\n\nBasalt column number ${i} stands in the quarry field.\n`);
  }
  // Commit often, so a stop lands between commits as well as inside one.
  writeFileSync(join(dataDir, 'corpora.json'), JSON.stringify({ own: { docs, site: null, library: null }, ingest: { commitEveryDocs: 100 } }));
  return dataDir;
}

async function restartAndCount(dataDir: string): Promise<void> {
  const srv = await startServer({ dataDir });
  const api = connect(srv);
  try {
    const r = await api.get('/api/search?q=basalt');
    assert.equal(r.status, 200);
    assert.equal(r.json.total, DOCS, 'every document is indexed exactly once after the restart');
  } finally {
    api.close();
    assert.equal((await srv.stop()).code, 0);
  }
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`${signal} during the first indexing, then a restart: every document served once${signal === 'SIGTERM' ? '; exit code 0' : ''}`, async () => {
    const dataDir = makeDataDir();
    const srv = await startServer({ dataDir, waitFor: 'listening' });
    await srv.waitForEvent('progress', { past: true });
    const { code, signal: killedBy } = await srv.stop(signal);
    if (signal === 'SIGTERM') assert.deepEqual({ code, killedBy }, { code: 0, killedBy: null }, srv.stderr());
    else assert.equal(killedBy, 'SIGKILL');
    await restartAndCount(dataDir);
  });
}
