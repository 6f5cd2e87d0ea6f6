// Builds a static page bundle: content.md rendered into the page.html layout, plus a stylesheet.
// Deterministic on purpose (no clock, no randomness, sorted output): the same inputs give the same bytes,
// so the control plane's artifact digest is reproducible. Replace this directory with your real site.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const site = JSON.parse(readFileSync('site.json', 'utf8'));
const layout = readFileSync('page.html', 'utf8');
const escape = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// A deliberately small Markdown subset: '# ' headings and paragraphs separated by blank lines.
const body = readFileSync('content.md', 'utf8').trim().split(/\n\s*\n/).map((block) =>
  block.startsWith('# ') ? `<h1>${escape(block.slice(2).trim())}</h1>` : `<p>${escape(block.trim())}</p>`,
).join('\n');

const html = layout.replaceAll('%TITLE%', escape(site.title)).replaceAll('%NAME%', escape(site.name)).replace('%CONTENT%', body);
mkdirSync('out/assets', { recursive: true });
writeFileSync('out/index.html', html);
writeFileSync('out/assets/style.css', 'body{font-family:sans-serif;max-width:40rem;margin:2rem auto}\n');
console.log(`built ${site.name}: index.html (${Buffer.byteLength(html)} bytes)`);
