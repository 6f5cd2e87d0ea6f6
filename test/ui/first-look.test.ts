// The README's "A first look" against the default own corpus (this repository's docs/ and site/ and the
// machine's manual pages), as a new user sees it on first start: every example annotated "top hit: <file>"
// must answer that file's page first — over the API, and for the browser example on the server-rendered
// results page — and "top completion: <word>" must be the first completion.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TestClient } from '../support/client.js';
import { REPO_ROOT, startServer, type TestServer } from '../support/server.js';

interface Example { path: string; file?: string; completion?: string }

/** The annotated examples of README.md's "A first look", with the path of each URL. */
function examples(): Example[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /^## A first look\s*\n([\s\S]*?)(?=^## )/m.exec(readme);
  assert.ok(section, 'README.md has a "## A first look" section');
  const out: Example[] = [];
  for (const line of section[1]!.split('\n')) {
    const m = /https:\/\/127\.0\.0\.1:8443(\/\S*?)['\s].*top (hit|completion): (\S+)/.exec(line);
    if (!m) continue;
    out.push(m[2] === 'hit' ? { path: m[1]!, file: m[3]! } : { path: m[1]!, completion: m[3]! });
  }
  assert.ok(out.length >= 4, `annotated examples in the first look: ${JSON.stringify(out)}`);
  assert.ok(out.some((e) => e.path.startsWith('/search?')), 'the first look opens the UI');
  return out;
}

/** The title the own corpus gives a page: the first `# ` heading of Markdown, the `<title>` of HTML. */
function titleOf(file: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const m = file.endsWith('.md') ? /^# (.+)$/m.exec(text) : /<title>([^<]+)<\/title>/.exec(text);
  assert.ok(m, `a title in ${file}`);
  return m[1]!.trim();
}

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

let srv: TestServer;
let api: TestClient;
before(async () => {
  srv = await startServer({ own: 'default', timeoutMs: 300_000 });
  api = connect(srv);
});
after(async () => {
  api?.close();
  await srv?.stop();
});

test('every README first-look example answers the page it names first', async () => {
  for (const e of examples()) {
    if (e.completion !== undefined) {
      const r = await api.get(e.path);
      assert.equal(r.status, 200, e.path);
      assert.equal(r.json.suggestions[0], e.completion, e.path);
      continue;
    }
    const want = titleOf(e.file!);
    if (e.path.startsWith('/api/')) {
      const r = await api.get(e.path);
      assert.equal(r.status, 200, e.path);
      assert.equal(r.json.results[0]?.title, want, `${e.path}: top hit`);
    } else {
      const r = await api.get(e.path, { validate: false }); // a page, not an API operation
      assert.equal(r.status, 200, e.path);
      const first = /<li class="result"><h2><a [^>]*>([^<]*)<\/a>/.exec(r.text);
      assert.equal(first && unescape(first[1]!), want, `${e.path}: top hit on the results page`);
    }
  }
});
