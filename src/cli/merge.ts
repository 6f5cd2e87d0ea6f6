/**
 * `quarry merge`: merges a corpus's index into at most N segments (default 1), none with deleted
 * documents, for a corpus loaded in bulk (`quarry import`, a crawl) and then mostly searched: every query
 * pays per segment. It takes the corpus's writer, so it reports the conflict and exits 1 while an import
 * or a server's indexing holds it; a server on the same data directory serves the merged index after the
 * commit, as it does any other.
 */
import { COMMON_OPTIONS, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openIndexReadOnly } from './corpus-access.js';

const USAGE = `usage: quarry merge [--corpus own|web|trusted] [--segments N] [--data DIR] [--json]

Merges the index of a corpus (default own) into at most N segments (default 1), dropping deleted
documents: queries get faster on a corpus that was imported in bulk. It rewrites every posting, so it
takes a while on a large corpus, and is not worth it on one that keeps taking commits.

  --segments N   at most this many segments remain (default 1)
  --data DIR     data directory (default ./data, or QUARRY_DATA)
  --json         one JSON object on stdout instead of prose`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('merge', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, { ...COMMON_OPTIONS, ...CORPUS_OPTIONS, segments: { type: 'string' } });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}.`);
    const segments = intOption('segments', values.segments, 1) ?? 1;
    const scope = corpusOption(values);
    const dataDir = resolveDataDir(values.data);
    const started = Date.now();
    const index = await openIndexReadOnly(dataDir, scope);
    try {
      const before = index.stats().segments;
      const writer = await index.openWriter();
      let info;
      try {
        info = await writer.forceMerge(segments);
      } finally {
        await writer.close();
      }
      const seconds = (Date.now() - started) / 1000;
      if (json) printJsonLine({ corpus: scope, before, segments: info.segments, docs: info.docs, generation: info.generation, seconds });
      else console.log(`Merged the ${scope} corpus from ${before} segments into ${info.segments} in ${seconds.toFixed(1)} s: ${info.docs} documents (generation ${info.generation}).`);
      return EXIT_OK;
    } finally {
      await index.close();
    }
  });
}
