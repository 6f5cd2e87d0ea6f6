/**
 * A small, fixed corpus for black-box tests of the search faces (REST, MCP, RPC), written into a data
 * directory before `startServer` starts the process:
 *
 *   const srv = await startServer({ setup: writeFixtureCorpus });
 *
 * `own`: Markdown files in `<data>/fixture-own` (made the own corpus's `docs` source through
 * `<data>/corpora.json`), indexed by the server on start. `web` and `trusted`: imported here through the
 * corpora's own ingest (as `quarry import` does), so every document has a URL and host.
 * What the tests can rely on (`FIXTURE`):
 *   - 45 own notes contain "granite" (`FIXTURE.graniteOwn`): three pages of 20, 20 and 5;
 *   - "elephant" is in 3 own documents, "elephnt" in none (did-you-mean → "elephant");
 *   - the phrase "quick brown fox" is in exactly one own document (`fox.md`); "brown" also in `dog.md`;
 *   - web: example.com, docs.example.com, badexample.com (site: dot-suffix tests), and one page whose text
 *     is over 1 MiB in UTF-8 with its 1 MiB boundary inside a two-byte character (`FIXTURE.hugeUrl`);
 *   - trusted: one reference page.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openCorpora } from '../../src/corpora/index.js';
import type { ReadItem } from '../../src/corpora/ingest.js';

export const FIXTURE = {
  graniteOwn: 45,
  elephantOwn: 3,
  hugeUrl: 'https://big.example.org/huge',
  /** 1 ASCII byte then two-byte characters: byte 1,048,576 falls inside one. */
  hugeText: 'a' + 'é'.repeat(600_000),
  web: [
    { url: 'https://example.com/granite', title: 'Granite at example', text: 'Granite rocks and an elephant statue carved from granite.' },
    { url: 'https://docs.example.com/basalt', title: 'Basalt documentation', text: 'Basalt is darker than granite; the docs explain basalt columns.' },
    { url: 'https://badexample.com/granite', title: 'Bad example granite', text: 'This granite page lives on badexample.com, not example.com.' },
  ],
  trusted: [
    { url: 'https://trusted.example.net/reference', title: 'Trusted granite reference', text: 'A reference manual about granite, flagged as a good reference.' },
  ],
} as const;

function doc(d: { url: string; title: string; text: string }): ReadItem {
  return { ok: true, doc: { key: d.url, url: d.url, host: new URL(d.url).hostname, title: d.title, text: d.text } };
}

export async function writeFixtureCorpus(dataDir: string): Promise<void> {
  const ownDir = join(dataDir, 'fixture-own');
  mkdirSync(ownDir, { recursive: true });
  for (let i = 0; i < FIXTURE.graniteOwn; i++) {
    const n = String(i).padStart(2, '0');
    const extra = ' granite'.repeat(i % 5);
    writeFileSync(join(ownDir, `granite-${n}.md`), `# Granite note ${n}\n\nNote ${n} is about granite quarry stones.${extra}\n`);
  }
  for (let i = 1; i <= FIXTURE.elephantOwn; i++) {
    writeFileSync(join(ownDir, `elephant-${i}.md`), `# Elephant ${i}\n\nThe elephant number ${i} walks through the savanna.\n`);
  }
  writeFileSync(join(ownDir, 'fox.md'), '# The fox\n\nThe quick brown fox jumps over the lazy dog.\n');
  writeFileSync(join(ownDir, 'dog.md'), '# The dog\n\nA brown dog sleeps while a quick cat watches.\n');
  writeFileSync(join(dataDir, 'corpora.json'), JSON.stringify({ own: { docs: ownDir, site: null, library: null } }));

  const corpora = await openCorpora({ dataDir });
  try {
    await corpora.ingest('web', [...FIXTURE.web.map(doc), doc({ url: FIXTURE.hugeUrl, title: 'Huge page', text: FIXTURE.hugeText })]);
    await corpora.ingest('trusted', FIXTURE.trusted.map(doc));
  } finally {
    await corpora.close();
  }
}
