// `quarry import` as a real process: JSONL and WARC into a corpus, acknowledged commits on stdout,
// idempotent re-import, and kill -9 mid-import losing nothing a printed commit had acknowledged; then
// `quarry merge` of what was imported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createInterface } from 'node:readline';
import { Index } from '../../src/engine/index.js';
import { hashKey, idKey, canonicalUrl } from '../../src/corpora/cid.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'bin/quarry.js');

function quarry(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000,
  });
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, lines };
}

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-cli-import-'));
    try { await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
  };
}

const WORDS = ['granite', 'basalt', 'quartz', 'feldspar', 'mica', 'obsidian', 'pumice', 'slate', 'marble', 'shale'];
function beirLine(i: number): string {
  return JSON.stringify({ _id: `d${i}`, title: `Rock ${i}`, text: `${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} sample number ${i} ${'filler '.repeat(i % 13)}` });
}

test('JSONL import: commits reported, documents searchable, malformed lines skipped by number, re-import idempotent', withDir(async (dir) => {
  const data = join(dir, 'data');
  mkdirSync(join(dir, 'rocks'));
  const file = join(dir, 'rocks', 'corpus.jsonl');
  const lines = Array.from({ length: 120 }, (_, i) => beirLine(i));
  lines.splice(10, 0, '{"_id": "broken"');
  writeFileSync(file, lines.join('\n') + '\n');

  const r = quarry(['import', '--data', data, '--corpus', 'trusted', '--commit-every', '50', '--json', file]);
  assert.equal(r.code, 0, r.stderr);
  const commits = r.lines.filter((l) => l.event === 'commit');
  assert.deepEqual(commits.map((c) => c.committed), [50, 100, 120]);
  const skips = r.lines.filter((l) => l.event === 'skip');
  assert.equal(skips.length, 1);
  assert.match(skips[0].where, /corpus\.jsonl:11$/);
  const done = r.lines.find((l) => l.event === 'done');
  assert.deepEqual([done.imported, done.skipped, done.docs, done.corpus], [120, 1, 120, 'trusted']);

  const s = quarry(['search', '--data', data, '--corpus', 'trusted', '--json', 'obsidian']);
  assert.equal(s.code, 0, s.stderr);
  assert.equal(s.lines[0].total, 12);
  assert.equal(s.lines[0].nresults, 12);
  assert.equal(s.lines[0].scope, 'trusted');
  const cid = hashKey(idKey('rocks/corpus', 'd5')).toString();
  const d = quarry(['doc', '--data', data, '--scope', 'trusted', '--json', cid]);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(d.lines[0].title, 'Rock 5');
  assert.equal(d.lines[0].found, true);

  // Again: same cids, so the corpus still holds 120 documents.
  const again = quarry(['import', '--data', data, '--corpus', 'trusted', '--json', file]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.lines.find((l) => l.event === 'done').docs, 120);
  const st = quarry(['stats', '--data', data, '--json']);
  assert.equal(st.lines[0].corpora.trusted.docs, 120);
  assert.equal(st.lines[0].corpora.web.docs, 0);
}));

test('WARC import (gzip per record): pages searchable by site:, doc has the canonical URL', withDir(async (dir) => {
  const data = join(dir, 'data');
  const rec = (uri: string, html: string) => {
    const http = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}`);
    const head = `WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: ${uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ${http.length}\r\n\r\n`;
    return gzipSync(Buffer.concat([Buffer.from(head), http, Buffer.from('\r\n\r\n')]));
  };
  const file = join(dir, 'crawl.warc.gz');
  writeFileSync(file, Buffer.concat([
    rec('https://Docs.Example.com/guide#intro', '<title>Guide</title><p>How to polish granite countertops.</p>'),
    rec('https://blog.other.org/post', '<title>Post</title><p>Granite is an igneous rock.</p>'),
  ]));
  const r = quarry(['import', '--data', data, '--json', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.find((l) => l.event === 'done').imported, 2);
  const s = quarry(['search', '--data', data, '--corpus', 'web', '--json', 'granite site:example.com']);
  assert.equal(s.lines[0].total, 1);
  const hit = s.lines[0].results[0];
  assert.equal(hit.url, 'https://docs.example.com/guide');
  assert.equal(hit.host, 'docs.example.com');
  assert.equal(hit.cid, hashKey(canonicalUrl('https://docs.example.com/guide')).toString());
  const d = quarry(['doc', '--data', data, '--corpus', 'web', hit.cid]);
  assert.equal(d.code, 0);
  assert.match(d.stdout, /^Guide\nhttps:\/\/docs\.example\.com\/guide\n/);
}));

test('usage mistakes exit 2, failures exit 1, each with a one-line message', withDir(async (dir) => {
  const data = join(dir, 'data');
  const cases: [string[], number, RegExp][] = [
    [['import', '--data', data], 2, /no FILE to import/],
    [['import', '--data', data, '--corpus', 'nope', 'x.jsonl'], 2, /--corpus must be one of own, web, trusted/],
    [['import', '--data', data, '--bogus', 'x.jsonl'], 2, /Unknown option '--bogus'/],
    [['import', '--data', data, join(dir, 'missing.jsonl')], 1, /cannot read .*missing\.jsonl: no such file/],
    [['import', '--data', data, join(dir, 'file.csv')], 2, /cannot tell the format/],
    [['search', '--data', data, '--corpus', 'web', 'x'], 1, /web corpus has no index .*quarry import --corpus web/],
    [['search', '--data', data], 2, /no QUERY/],
    [['doc', '--data', data, '0123'], 2, /not 1–19 decimal digits/],
    [['suggest', '--data', data, '--limit', 'x', 'gra'], 2, /--limit must be an integer/],
  ];
  for (const [args, code, message] of cases) {
    const r = quarry(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.split('\n')[0]!, message, args.join(' '));
  }
  writeFileSync(join(dir, 'one.jsonl'), beirLine(1) + '\n');
  assert.equal(quarry(['import', '--data', data, '--corpus', 'web', join(dir, 'one.jsonl')]).code, 0);
  const nf = quarry(['doc', '--data', data, '--corpus', 'web', '--json', '42']);
  assert.equal(nf.code, 1);
  assert.equal(nf.lines[0].found, false);
  assert.equal(nf.lines[0].error.code, 'not_found');
}));

test('kill -9 during an import loses no document of an acknowledged commit; re-running completes it', withDir(async (dir) => {
  const data = join(dir, 'data');
  const N = 30_000;
  const file = join(dir, 'big.jsonl');
  writeFileSync(file, Array.from({ length: N }, (_, i) => beirLine(i)).join('\n') + '\n');
  const child = spawn(process.execPath, [MAIN, 'import', '--data', data, '--collection', 'big', '--commit-every', '1000', '--json', file], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let acknowledged = 0;
  let commitsSeen = 0;
  let finished = false;
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  for await (const line of createInterface({ input: child.stdout! })) {
    if (!line.startsWith('{')) continue;
    const ev = JSON.parse(line);
    if (ev.event === 'commit') {
      acknowledged = ev.committed;
      if (++commitsSeen === 3) child.kill('SIGKILL');
    }
    if (ev.event === 'done') finished = true;
  }
  await exited;
  assert.ok(acknowledged >= 1000, 'at least one commit was acknowledged before the kill');

  const index = await Index.open(join(data, 'index', 'web'));
  try {
    const s = index.searcher();
    assert.ok(s.docCount >= acknowledged, `${s.docCount} documents, ${acknowledged} acknowledged`);
    // Documents are read and committed in file order: the first `acknowledged` lines are all there.
    for (let i = 0; i < acknowledged; i++) {
      const d = s.get(hashKey(idKey('big', `d${i}`)));
      assert.ok(d, `document d${i} of an acknowledged commit is present`);
      assert.equal(d.title, `Rock ${i}`);
    }
    assert.deepEqual(index.check().problems, [], 'the index passes its consistency check');
  } finally {
    await index.close();
  }

  // The writer lock of the killed process is stale: a new import takes it over and completes.
  const again = quarry(['import', '--data', data, '--collection', 'big', '--commit-every', '5000', '--json', file]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.lines.find((l) => l.event === 'done').docs, N);
  if (finished) process.stderr.write('note: the import finished before the kill; the test still checked recovery\n');
}));

test('Ctrl-C (SIGINT) stops reading, commits what was read and exits 130', withDir(async (dir) => {
  const data = join(dir, 'data');
  const N = 30_000;
  const file = join(dir, 'big.jsonl');
  writeFileSync(file, Array.from({ length: N }, (_, i) => beirLine(i)).join('\n') + '\n');
  const child = spawn(process.execPath, [MAIN, 'import', '--data', data, '--commit-every', '1000', '--json', file], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  let done: any;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (!line.startsWith('{')) continue;
    const ev = JSON.parse(line);
    if (ev.event === 'commit' && ev.committed === 1000) child.kill('SIGINT');
    if (ev.event === 'done') done = ev;
  }
  const code = await exited;
  assert.ok(done, 'a done line is printed');
  if (done.interrupted) {
    assert.equal(code, 130);
    assert.ok(done.imported < N && done.imported >= 1000);
    assert.equal(done.docs, done.imported, 'everything read was committed');
  } else {
    assert.equal(code, 0, 'the import had already finished');
  }
}));

test('quarry merge: a bulk import merged into one segment, deletes dropped, answers unchanged; a held writer is a conflict', withDir(async (dir) => {
  const data = join(dir, 'data');
  const file = join(dir, 'rocks.jsonl');
  writeFileSync(file, Array.from({ length: 60 }, (_, i) => beirLine(i)).join('\n') + '\n');
  assert.equal(quarry(['import', '--data', data, '--commit-every', '10', '--json', file]).code, 0);
  // re-importing ten of the documents replaces them: their old copies become deletes in older segments
  writeFileSync(file, Array.from({ length: 10 }, (_, i) => beirLine(i * 3)).join('\n') + '\n');
  assert.equal(quarry(['import', '--data', data, '--json', file]).code, 0);
  const stats = () => quarry(['stats', '--data', data, '--corpus', 'web', '--json']).lines[0].corpora.web;
  const before = stats();
  assert.equal(before.docs, 60);
  assert.ok(before.segments > 1, `${before.segments} segments before the merge`);
  const search = () => quarry(['search', '--data', data, '--corpus', 'web', '--json', 'basalt granite']).lines[0];
  const answers = search();
  assert.ok(answers.total > 0);

  const merged = quarry(['merge', '--data', data, '--corpus', 'web', '--json']);
  assert.equal(merged.code, 0, merged.stderr);
  assert.deepEqual([merged.lines[0].before, merged.lines[0].segments, merged.lines[0].docs], [before.segments, 1, 60]);
  assert.deepEqual([stats().segments, stats().docs], [1, 60]);
  const index = await Index.open(join(data, 'index', 'web'));
  assert.equal(index.snapshot().segments[0]!.maxDoc, 60, 'no deleted slot is left');
  assert.deepEqual(search(), answers);

  // a writer held elsewhere (an import, a server indexing): exit 1, nothing changed
  const writer = await index.openWriter();
  try {
    const conflict = quarry(['merge', '--data', data, '--corpus', 'web']);
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /^quarry merge: The index at .* is being written by process \d+/m);
  } finally {
    await writer.close();
    await index.close();
  }
  assert.equal(quarry(['merge', '--data', data, '--corpus', 'web', '--segments', '0']).code, 2);
  assert.equal(quarry(['merge', '--data', join(dir, 'empty'), '--corpus', 'web']).code, 1);
}));
