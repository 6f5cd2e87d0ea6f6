// Ingest while queries are answered: a server-side Corpora sees the commits of a `quarry import` running
// in another process (refresh, `index.committed` events) without reopening, and no query fails meanwhile.
// In-process ingests into web and trusted run while own is queried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openCorpora } from '../../src/corpora/corpora.js';
import { resolveCorporaConfig } from '../../src/corpora/config.js';
import { EventBus } from '../../src/events/bus.js';
import type { ReadItem } from '../../src/corpora/ingest.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('commits of another process become searchable here, and queries never fail meanwhile', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-live-'));
  try {
    const data = join(dir, 'data');
    const file = join(dir, 'live.jsonl');
    const N = 6000;
    writeFileSync(file, Array.from({ length: N }, (_, i) => JSON.stringify({ url: `https://live.example/${i}`, title: `Live ${i}`, text: `tidal wave ${i}` })).join('\n'));
    const bus = new EventBus();
    const committed: number[] = [];
    bus.subscribe((e) => { if (e.kind === 'index.committed' && e.data.scope === 'web') committed.push(e.data.docs as number); });
    const resolved = resolveCorporaConfig({ own: { docs: null, site: null, library: null }, refreshIntervalMs: 50 }, dir);
    const corpora = await openCorpora({ dataDir: data, resolved, bus });
    try {
      const child = spawn(process.execPath, [join(ROOT, 'bin/quarry.js'), 'import', '--data', data, '--commit-every', '500', '--json', file], {
        cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => { stderr += c; });
      const exit = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
      let code: number | null | undefined;
      void exit.then((c) => { code = c; });
      const seen = new Set<number>();
      let queries = 0;
      while (code === undefined) {
        const s = corpora.searcher('web');
        const r = s.search('tidal');
        assert.equal(r.total, s.docCount, 'every document of the snapshot matches');
        seen.add(s.docCount);
        queries++;
        await new Promise((res) => setTimeout(res, 20));
      }
      assert.equal(code, 0, stderr);
      await corpora.refresh();
      assert.equal(corpora.searcher('web').docCount, N, 'the last commit is visible without reopening');
      assert.equal(corpora.searcher('web').search('"tidal wave 5999"').total, 1);
      assert.ok(seen.size >= 2, `intermediate commits were seen (${[...seen].join(', ')}) over ${queries} queries`);
      assert.ok(committed.length >= 2 && committed.at(-1) === N, `index.committed events: ${committed.join(', ')}`);
      assert.equal((bus.snapshot().index as any).web.docs, N);
    } finally {
      await corpora.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ingests into web and trusted run at once; a second ingest into the same corpus is a conflict', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-live2-'));
  try {
    const resolved = resolveCorporaConfig({ own: { docs: null, site: null, library: null }, ingest: { commitEveryDocs: 100 } }, dir);
    const corpora = await openCorpora({ dataDir: join(dir, 'data'), resolved });
    try {
      async function* slow(prefix: string, n: number): AsyncGenerator<ReadItem> {
        for (let i = 0; i < n; i++) {
          if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1));
          yield { ok: true, doc: { key: `id:${prefix}/${i}`, title: `${prefix} ${i}`, text: `${prefix} document ${i}` } };
        }
      }
      const web = corpora.ingest('web', slow('web', 400));
      const trusted = corpora.ingest('trusted', slow('trusted', 300));
      await assert.rejects(corpora.ingest('web', slow('again', 1)), (e: any) => e.code === 'conflict');
      const [w, t] = await Promise.all([web, trusted]);
      assert.deepEqual([w.docs, t.docs], [400, 300]);
      assert.equal(w.commits.length, 4);
      assert.equal(corpora.searcher('web').search('document').total, 400);
      assert.equal(corpora.searcher('trusted').search('document').total, 300);
      assert.equal(corpora.status().web.state, 'ready');
    } finally {
      await corpora.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
