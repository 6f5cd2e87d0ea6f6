/**
 * `quarry doc CID`: prints one document of a corpus (read-only). `--json` prints the body of
 * `GET /api/doc`, byte for byte (the found document, or the not-found body). Exit 1 when there is no such
 * document.
 */
import { parseCid } from '../kernel/cid.js';
import { LOCAL_OPERATOR } from '../kernel/principal.js';
import { COMMON_OPTIONS, EXIT_FAILURE, EXIT_OK, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openSearchService, wireScope } from './corpus-access.js';

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
    const cid = parseCid(positionals[0]); // a malformed CID is a usage mistake, whether or not the index exists
    const { service, close } = await openSearchService(resolveDataDir(values.data), scope);
    try {
      const d = await service.doc(LOCAL_OPERATOR, { cid: cid.toString(), scope: wireScope(scope) });
      if (json) printJsonLine(d);
      if (!d.found) {
        process.stderr.write(`quarry doc: ${d.error.message}\n`);
        return EXIT_FAILURE;
      }
      if (!json) {
        console.log(d.title);
        if (d.url) console.log(d.url);
        console.log(`cid ${d.cid} (${scope})${d.truncated ? ', text cut at 1 MiB' : ''}\n`);
        console.log(d.text);
      }
      return EXIT_OK;
    } finally {
      await close();
    }
  });
}
