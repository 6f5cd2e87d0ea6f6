/**
 * `quarry import`: loads JSONL (BEIR) or WARC files into a corpus, so the output of any crawler can be
 * searched. Commits every N documents or T seconds: a server on the same data directory serves the new
 * documents after each commit, with no restart. Every commit is printed when it is acknowledged (with
 * `--json`, a line `{"event":"commit",…}`): what a printed commit covers survives any crash, `kill -9`
 * included. Re-importing a file is idempotent (same URLs or ids → same cids → replaced, not duplicated).
 * Ctrl-C stops reading, commits what was read, and exits 130.
 */
import { statSync } from 'node:fs';
import { openCorpora } from '../corpora/corpora.js';
import type { ReadItem } from '../corpora/ingest.js';
import { readJsonl } from '../corpora/jsonl.js';
import { readWarc } from '../corpora/warc.js';
import { COMMON_OPTIONS, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, loadCliCorporaConfig } from './corpus-access.js';
import { ProgressBar } from './progress.js';

const USAGE = `usage: quarry import [--corpus web|trusted|own] [--format jsonl|warc] [options] FILE...

Imports documents into a corpus (default web). JSONL: one {"title","text","url"?,"_id"?} per line (BEIR
corpus.jsonl); WARC 1.0/1.1: response and resource records of HTML or text. Gzipped files are read as
such. Malformed records are reported and skipped.

  --format F           jsonl or warc; default from each file's name (.jsonl/.json/.ndjson, .warc; .gz allowed)
  --collection NAME    JSONL: the collection that scopes "_id" values (default: <dir>/<file name>)
  --commit-every N     commit after N documents (default from the configuration: 2000)
  --commit-seconds S   commit at least every S seconds while documents arrive (default 5)
  --config FILE        configuration file, or QUARRY_CONFIG; default DIR/corpora.json
  --data DIR           data directory (default ./data, or QUARRY_DATA)
  --json               JSON lines on stdout: commit, skip and done events`;

/** Skips printed one by one in prose mode before only their count is reported. */
export const MAX_PRINTED_SKIPS = 20;

type Format = 'jsonl' | 'warc';

function formatOf(file: string, flag: string | undefined): Format {
  if (flag !== undefined) {
    if (flag !== 'jsonl' && flag !== 'warc') throw new UsageError(`--format must be jsonl or warc, got ${JSON.stringify(flag)}.`);
    return flag;
  }
  const name = file.toLowerCase().replace(/\.gz$/, '');
  if (/\.(jsonl|ndjson|json)$/.test(name)) return 'jsonl';
  if (/\.(warc|arc)$/.test(name)) return 'warc';
  throw new UsageError(`cannot tell the format of ${file} from its name; pass --format jsonl or --format warc.`);
}

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('import', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, {
      ...COMMON_OPTIONS, ...CORPUS_OPTIONS,
      format: { type: 'string' }, collection: { type: 'string' }, config: { type: 'string' },
      'commit-every': { type: 'string' }, 'commit-seconds': { type: 'string' },
    });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    const scope = corpusOption(values, 'web');
    if (positionals.length === 0) throw new UsageError('no FILE to import.');
    const files = positionals.map((f) => ({ file: f, format: formatOf(f, values.format) }));
    let totalBytes = 0;
    for (const { file } of files) {
      let st;
      try { st = statSync(file); } catch (err) { throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}.`); }
      if (!st.isFile()) throw new Error(`${file} is not a file.`);
      totalBytes += st.size;
    }
    const dataDir = resolveDataDir(values.data);
    const resolved = loadCliCorporaConfig(values.config, dataDir);
    const every = intOption('commit-every', values['commit-every'], 1);
    if (every !== undefined) resolved.ingest.commitEveryDocs = every;
    const secondsRaw = values['commit-seconds'];
    if (secondsRaw !== undefined) {
      const s = Number(secondsRaw);
      if (!(s > 0) || !Number.isFinite(s)) throw new UsageError(`--commit-seconds must be a number > 0, got ${JSON.stringify(secondsRaw)}.`);
      resolved.ingest.commitEverySeconds = s;
    }

    const progress = { bytesRead: 0 };
    const { maxRecordBytes } = resolved.ingest;
    const collection = values.collection;
    async function* allItems(): AsyncGenerator<ReadItem> {
      for (const { file, format } of files) {
        if (format === 'jsonl') yield* readJsonl(file, { maxLineBytes: maxRecordBytes, progress, ...(collection ? { collection } : {}) });
        else yield* readWarc(file, { maxRecordBytes, progress });
      }
    }

    const corpora = await openCorpora({ dataDir, resolved });
    const bar = new ProgressBar('importing', { enabled: !json, unit: 'MB', decimals: 1 });
    const abort = new AbortController();
    const onSigint = () => abort.abort();
    process.on('SIGINT', onSigint);
    let printedSkips = 0;
    const started = Date.now();
    try {
      const report = await corpora.ingest(scope, allItems(), {
        phase: 'importing',
        signal: abort.signal,
        onProgress: (p) => bar.update(progress.bytesRead / 1048576, totalBytes / 1048576, `${p.docs.toLocaleString('en-US')} docs`),
        onCommit: (c) => {
          if (json) printJsonLine({ event: 'commit', corpus: scope, generation: c.generation, committed: c.committedDocs, docs: c.docs });
          else { bar.clear(); console.log(`committed generation ${c.generation}: ${c.committedDocs} documents imported so far; the ${scope} corpus has ${c.docs}`); }
        },
        onSkip: (where, reason) => {
          if (json) { printJsonLine({ event: 'skip', where, reason }); return; }
          if (printedSkips++ < MAX_PRINTED_SKIPS) { bar.clear(); process.stderr.write(`skipped ${where}: ${reason}\n`); }
        },
      });
      bar.finish();
      const stats = corpora.index(scope).stats();
      const seconds = (Date.now() - started) / 1000;
      const interrupted = report.aborted;
      if (json) {
        printJsonLine({
          event: 'done', corpus: scope, imported: report.docs, skipped: report.skipped, commits: report.commits.length,
          docs: stats.docs, generation: stats.generation, seconds, interrupted,
        });
      } else {
        if (printedSkips > MAX_PRINTED_SKIPS) process.stderr.write(`… and ${printedSkips - MAX_PRINTED_SKIPS} more skipped records\n`);
        console.log(`${interrupted ? 'Interrupted: ' : ''}imported ${report.docs} documents${report.skipped ? ` (${report.skipped} records skipped)` : ''}`
          + ` into ${scope} in ${seconds.toFixed(1)} s; the ${scope} corpus has ${stats.docs} documents (generation ${stats.generation}).`);
      }
      if (interrupted) return EXIT_INTERRUPTED;
      return report.docs === 0 && report.skipped > 0 ? EXIT_FAILURE : EXIT_OK;
    } finally {
      process.off('SIGINT', onSigint);
      bar.finish();
      await corpora.close();
    }
  });
}
