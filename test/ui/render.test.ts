// The pure parts of the UI's rendering (src/ui/): escaping, which words are highlighted, which URLs may
// become links — the guarantees the pages' safety rests on, checked without a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { highlightRuns, isWebUrl, queryTerms } from '../../src/ui/highlight.js';
import { docView, resultsView } from '../../src/ui/views.js';
import { h, toHtml } from '../../src/ui/vnode.js';

test('toHtml escapes text and attribute values', () => {
  assert.equal(toHtml(h('p', { title: '"><script>' }, '<b>&</b>')), '<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;&amp;&lt;/b&gt;</p>');
  assert.equal(toHtml(h('input', { hidden: true, disabled: false, value: "'x'" })), '<input hidden value="&#39;x&#39;">');
});

test('query terms: excluded words and site: filters are not highlighted; stems match', () => {
  assert.deepEqual([...queryTerms('+Granite "quick brown" -basalt site:example.com walking')], ['granit', 'quick', 'brown', 'walk']);
  const text = 'Walks by granites and boxes, queried; not basalt, nor glass.';
  const runs = highlightRuns(text, queryTerms('walking granite box query glasses -basalt'));
  assert.deepEqual(runs.filter((r) => r.hit).map((r) => r.text), ['Walks', 'granites', 'boxes', 'queried', 'glass']);
  assert.equal(runs.map((r) => r.text).join(''), text, 'the runs are the whole text');
});

test('only http(s) URLs become links', () => {
  assert.ok(isWebUrl('https://example.com/') && isWebUrl('HTTP://x'));
  for (const u of ['javascript:alert(1)', ' javascript:alert(1)', 'data:text/html,x', 'vbscript:x', '//evil.example']) assert.ok(!isWebUrl(u), u);
});

test('hostile titles, URLs and texts come out as text, with no live link', () => {
  const payload = '<script>alert(1)</script><img src=x onerror=alert(2)>';
  const html = toHtml(resultsView({
    query: 'payload', scope: 'web', page: 0, total: 1, nresults: 1,
    results: [{ cid: '7', score: 1, title: payload, snippet: `payload ${payload}`, url: 'javascript:alert(3)', host: payload }],
  }));
  assert.doesNotMatch(html, /<script|<img|href="javascript/i);
  const doc = toHtml(docView({ cid: '7', title: payload, url: 'javascript:alert(3)', truncated: true, text: `${payload} payload` }, 'web', 'payload'));
  assert.doesNotMatch(doc, /<script|<img|href="javascript/i);
  assert.match(doc, /<mark id="hit-0">payload<\/mark>/);
  assert.match(doc, /id="truncated"/);
});
