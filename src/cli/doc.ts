/**
 * `quarry doc CID`: prints one document of a corpus (read-only). `--json` prints the object of
 * `GET /api/doc` (the whole text: the 1 MiB cut is the HTTP face's). Exit 1 when there is no such document.
 */
import { parseCid } from '../engine/index.js';
import { COMMON_OPTIONS, EXIT_FAILURE, EXIT_OK, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openIndexReadOnly } from './corpus-access.js';

const USAGE = `usage: quarry doc [--corpus own|web|trusted] [--data DIR] [--json] CID

Prints the document with content id CID (a decimal number, as search results show it).`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('doc', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, { ...COMMON_OPTIONS, ...CORPUS_OPTIONS });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    const scope = corpusOption(values);
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'no CID given.' : 'give exactly one CID.');
    const cid = parseCid(positionals[0]!);
    const index = await openIndexReadOnly(resolveDataDir(values.data), scope);
    try {
      const d = index.searcher().get(cid);
      if (!d) {
        const message = `No document with cid ${cid} in the ${scope} corpus.`;
        if (json) printJsonLine({ v: 1, found: false, cid: cid.toString(), error: { code: 'not_found', message } });
        process.stderr.write(`quarry doc: ${message}\n`);
        return EXIT_FAILURE;
      }
      if (json) {
        printJsonLine({ v: 1, found: true, cid: cid.toString(), ...(d.url !== undefined ? { url: d.url } : {}), ...(d.host !== undefined ? { host: d.host } : {}), title: d.title, truncated: false, text: d.text });
      } else {
        console.log(d.title);
        if (d.url) console.log(d.url);
        console.log(`cid ${cid} (${scope})\n`);
        console.log(d.text);
      }
      return EXIT_OK;
    } finally {
      await index.close();
    }
  });
}
