// Extraction: HTML, Markdown, plain text and troff man pages give a title and clean text, and any input,
// however broken, gives a result rather than a throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { extractHtml, extractMan, extractMarkdown, extractPlain, formatOfFile, troffInline } from '../../src/corpora/extract.js';

test('HTML: title, visible text, entities decoded, scripts and styles dropped, blocks separated', () => {
  const r = extractHtml(`<!doctype html><html><head><title> Quarry &amp; you </title><style>p{color:red}</style>
    <script>var secret = 1;</script></head><body><h1>Heading</h1><p>one<br>two</p><div>three</div>
    <p>caf&eacute; &lt;tag&gt;</p><noscript>nojs</noscript></body></html>`);
  assert.equal(r.title, 'Quarry & you');
  assert.match(r.text, /Heading\none\ntwo\nthree\ncafé <tag>/);
  assert.doesNotMatch(r.text, /secret|color|nojs/);
  assert.equal(extractHtml('<h1>Only <b>h1</b></h1><p>x</p>').title, 'Only h1');
  assert.equal(extractHtml('<p>no title</p>', 'fallback').title, 'fallback');
  assert.equal(extractHtml('<html><head><title>T</title><p>no body tag, no end of head</p>').text, 'no body tag, no end of head');
});

test('Markdown: first heading is the title, markup removed, code kept as text', () => {
  const r = extractMarkdown('---\nlayout: x\n---\n# The *CLI* guide\n\nRun `quarry search` — see [the docs](docs.md) and ![logo](l.png).\n\n```sh\nquarry index\n```\n\n- **bold** item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  assert.equal(r.title, 'The CLI guide');
  assert.match(r.text, /Run quarry search — see the docs and logo\./);
  assert.match(r.text, /quarry index/);
  assert.match(r.text, /bold item/);
  assert.doesNotMatch(r.text, /[*`#]|\]\(|---/);
  assert.equal(extractMarkdown('Title\n=====\n\ntext').title, 'Title');
});

test('plain text: first line is the title', () => {
  assert.deepEqual(extractPlain('\n\n  Hello   world \n\nbody\n'), { title: 'Hello world', text: 'Hello world\n\nbody' });
});

test('man pages: name(section) — description, macros and escapes resolved', () => {
  const page = [
    '.\\" comment',
    '.de XX', '.ft B', '..',
    '.TH GREP 1 2024 "GNU" "User Commands"',
    '.if n \\{\\',
    '.  ds lq "', '.\\}',
    '.SH NAME', 'grep, egrep \\- print lines that match patterns',
    '.SH SYNOPSIS', '.B grep', '[\\fIOPTION\\fP...] \\fIPATTERNS\\fR',
    '.SH DESCRIPTION', '.BR grep (1)', 'searches \\(lqfiles\\(rq for \\*(lqpatterns\\*(rq \\- fast.',
    '.TP', '.BR \\-i ", " \\-\\^\\-ignore\\-case', 'Ignore case.',
  ].join('\n');
  const r = extractMan(page);
  assert.equal(r.title, 'grep(1) — print lines that match patterns');
  assert.match(r.text, /grep \[OPTION\.\.\.\] PATTERNS/);
  assert.match(r.text, /grep\(1\) searches "files" for "patterns" - fast\./);
  assert.match(r.text, /-i, --ignore-case Ignore case\./);
  assert.doesNotMatch(r.text, /\\|comment|\.ft/);
  assert.equal(extractMan('.so man1/other.1\n').text, '', 'an alias page has no text');
  const mdoc = extractMan('.Dd May 1\n.Dt SSH 1\n.Sh NAME\n.Nm ssh\n.Nd remote login client\n.Sh SYNOPSIS\n.Nm\n.Op Fl v\n');
  assert.equal(mdoc.title, 'ssh(1) — remote login client');
  assert.equal(troffInline('a\\fBb\\fR\\s-1c\\s0\\(emd\\[u00E9]\\e'), 'abc—dé\\');
});

test('file formats by name', () => {
  assert.equal(formatOfFile('index.HTML'), 'html');
  assert.equal(formatOfFile('a.md'), 'markdown');
  assert.equal(formatOfFile('notes.txt'), 'text');
  assert.equal(formatOfFile('grep.1.gz'), 'man');
  assert.equal(formatOfFile('logo.png'), undefined);
});

test('no input makes an extractor throw', () => {
  const alphabet = fc.constantFrom('<', '>', '/', '"', "'", '&', ';', '#', '\\', '.', '\n', ' ', 'a', 'b', 'f', '(', '[', ']', '*', '`', '!', '-', '=', '|', 's', 'h', 'T', 'H', 'S', 'script', 'title', 'de', 'if', '\\{', '\\}');
  fc.assert(fc.property(fc.array(alphabet, { maxLength: 200 }).map((a) => a.join('')), (s) => {
    for (const fn of [extractHtml, extractMarkdown, extractPlain, extractMan]) {
      const r = fn(s, 'fb');
      assert.equal(typeof r.title, 'string');
      assert.equal(typeof r.text, 'string');
    }
  }), { numRuns: 400 });
});
