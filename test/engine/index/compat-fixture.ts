/**
 * The documents of the checked-in format fixture (fixtures/format-v1) and the script that wrote it:
 *   node --import tsx test/engine/index/compat-fixture.ts test/engine/index/fixtures/format-v1
 * Regenerate only together with a format version bump, keeping the old fixture readable or dropped
 * deliberately.
 */
import { Index, type DocInput } from '../../../src/engine/index/index.js';

export const FIXTURE_DOCS: DocInput[] = [
  { cid: 1n, title: 'Installing the kernel', text: 'To install a new kernel, run apt install linux-image. The kernel modules follow.', url: 'https://docs.example.org/kernel', host: 'docs.example.org' },
  { cid: 2n, title: 'Café naïve résumé', text: 'Diacritics are folded: café, naïve and résumé match cafe, naive and resume.' },
  { cid: 9223372036854775807n, title: 'Largest cid', text: 'The largest cid is 2^63 − 1.', url: 'https://example.com/max', host: 'example.com' },
  { cid: 40n, title: 'Replaced', text: 'this version is replaced in the second commit' },
  { cid: 50n, title: 'Deleted', text: 'this document is deleted in the second commit' },
];

/** Two commits: the second replaces cid 40 and deletes cid 50, so the fixture has deletes and two segments. */
export async function writeFixture(dir: string): Promise<void> {
  const index = await Index.open(dir);
  const w = await index.openWriter();
  for (const d of FIXTURE_DOCS) w.upsert(d);
  // 130 more, so "common" has a full (bit-packed) block of 128 docs and a partial one
  for (let i = 0; i < 130; i++) w.upsert({ cid: 1000n + BigInt(i), title: `filler ${i}`, text: `common ${'word '.repeat(i % 5)}end` });
  await w.commit();
  w.upsert({ cid: 40n, title: 'Replaced', text: 'the second version of document forty' });
  w.delete(50n);
  await w.commit();
  await w.close();
  await index.close();
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  await writeFixture(process.argv[2]!);
}
