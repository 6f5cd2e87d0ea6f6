// A real crawler's output: GNU Wget crawls a local HTTP server into a WARC (gzip per record, with
// request, metadata and log records besides the responses), and `quarry import` makes its pages
// searchable — the "output of any existing crawler" claim, checked against a real peer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasWget = spawnSync('wget', ['--version'], { encoding: 'utf8' }).status === 0;

const PAGES: Record<string, { type: string; body: Buffer; gzip?: boolean }> = {
  '/': { type: 'text/html; charset=utf-8', body: Buffer.from('<html><head><title>Mineral index</title></head><body><a href="/quartz.html">quartz</a> <a href="/latin.html">latin</a> <a href="/notes.txt">notes</a> <a href="/logo.png">logo</a> <a href="/gone.html">gone</a></body></html>') },
  '/quartz.html': { type: 'text/html', body: Buffer.from('<title>Quartz</title><p>Quartz is a hard crystalline mineral of silica.</p>'), gzip: true },
  '/latin.html': { type: 'text/html; charset=iso-8859-1', body: Buffer.from('<title>Calcite</title><p>La calcite est tr\xe8s r\xe9pandue.</p>', 'latin1') },
  '/notes.txt': { type: 'text/plain', body: Buffer.from('Field notes\n\nFeldspar everywhere.') },
  '/logo.png': { type: 'image/png', body: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
};

test('a WARC written by wget imports its HTML and text pages', async () => {
  assert.ok(hasWget, 'wget is required (scripts/system-deps.sh installs it)');
  const dir = mkdtempSync(join(tmpdir(), 'quarry-wget-'));
  const server = createServer((req, res) => {
    const page = PAGES[req.url ?? ''];
    if (!page) { res.writeHead(404, { 'Content-Type': 'text/html' }); res.end('<p>not found</p>'); return; }
    const gz = page.gzip && /gzip/.test(String(req.headers['accept-encoding']));
    res.writeHead(200, { 'Content-Type': page.type, ...(gz ? { 'Content-Encoding': 'gzip' } : {}) });
    res.end(gz ? gzipSync(page.body) : page.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    // Asynchronously: the server answering wget runs in this very process.
    const crawl = await new Promise<{ code: number | null; stderr: string }>((res) => {
      const c = execFile('wget', ['-q', '-r', '-l', '1', '--compression=auto', '--warc-file', join(dir, 'crawl'), '-P', join(dir, 'mirror'), `http://127.0.0.1:${port}/`], { timeout: 60_000 }, (err, _out, stderr) => {
        res({ code: err ? (typeof (err as any).code === 'number' ? (err as any).code : null) : 0, stderr });
      });
      void c;
    });
    assert.ok(crawl.code === 0 || crawl.code === 8, `wget exit ${crawl.code}: ${crawl.stderr}`); // 8: the 404 link
    const data = join(dir, 'data');
    const imp = spawnSync(process.execPath, [join(ROOT, 'bin/quarry.js'), 'import', '--data', data, '--json', join(dir, 'crawl.warc.gz')], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    assert.equal(imp.status, 0, imp.stderr);
    const lines = imp.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const done = lines.find((l) => l.event === 'done');
    assert.equal(done.imported, 4, 'index, quartz, latin, notes: not the png, the 404, requests, metadata or the log');
    assert.equal(done.skipped, 0, JSON.stringify(lines.filter((l) => l.event === 'skip')));
    const search = (q: string) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/quarry.js'), 'search', '--data', data, '--corpus', 'web', '--json', q], { cwd: ROOT, encoding: 'utf8' });
      return JSON.parse(r.stdout);
    };
    const quartz = search('silica');
    assert.equal(quartz.total, 1);
    assert.equal(quartz.results[0].url, `http://127.0.0.1:${port}/quartz.html`);
    assert.equal(quartz.results[0].title, 'Quartz');
    assert.equal(search('très').results[0]?.title, 'Calcite');
    assert.equal(search('feldspar').results[0]?.title, 'Field notes');
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
