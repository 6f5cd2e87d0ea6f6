/**
 * `quarry index`: brings the own corpus up to date with its configured sources (docs directory, site
 * pages, library), reading only files that are new or changed since the last run (`--full`: all of them).
 * Safe while a server runs on the same data directory: the server picks the commits up; if the server
 * (or another `quarry index`) is indexing right now, this reports the conflict and exits 1.
 */
import { openCorpora } from '../corpora/corpora.js';
import { COMMON_OPTIONS, EXIT_FAILURE, EXIT_OK, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { loadCliCorporaConfig } from './corpus-access.js';
import { ProgressBar } from './progress.js';

const USAGE = `usage: quarry index [--full] [--config FILE] [--data DIR] [--json]

Indexes the own corpus from the sources of the configuration (docs, site pages, library): on later runs
only what changed. --full reads every source file again.

  --config FILE  configuration file (its "corpora" member), or QUARRY_CONFIG; default DIR/corpora.json
  --data DIR     data directory (default ./data, or QUARRY_DATA)
  --json         one JSON object on stdout instead of prose`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('index', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, {
      ...COMMON_OPTIONS, config: { type: 'string' }, full: { type: 'boolean', default: false },
    });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}.`);
    const dataDir = resolveDataDir(values.data);
    const resolved = loadCliCorporaConfig(values.config, dataDir);
    const started = Date.now();
    const corpora = await openCorpora({ dataDir, resolved });
    const bar = new ProgressBar('indexing', { enabled: !json, unit: 'files' });
    try {
      const r = await corpora.ensureOwnIndexed((p) => bar.update(p.done, p.total), { full: values.full === true });
      bar.finish();
      const stats = corpora.index('own').stats();
      const seconds = (Date.now() - started) / 1000;
      if (r.busy) {
        const message = 'another process is indexing the own corpus right now; try again when it is done.';
        if (json) printJsonLine({ error: { code: 'conflict', message } });
        process.stderr.write(`quarry index: ${message}\n`);
        return EXIT_FAILURE;
      }
      if (json) {
        printJsonLine({
          corpus: 'own', reused: r.reused, files: r.files, changed: r.changed, removed: r.removed,
          indexed: r.report?.docs ?? 0, skipped: r.report?.skipped ?? 0, commits: r.report?.commits.length ?? 0,
          docs: stats.docs, generation: stats.generation, seconds,
        });
      } else if (r.reused) {
        console.log(`The own corpus is up to date: ${stats.docs} documents from ${r.files} source files (generation ${stats.generation}).`);
      } else {
        console.log(`Indexed ${r.report?.docs ?? 0} documents from ${r.changed} new or changed files`
          + `${r.removed ? `, removed ${r.removed}` : ''}${r.report?.skipped ? `, skipped ${r.report.skipped} without text` : ''}`
          + ` in ${seconds.toFixed(1)} s; the own corpus has ${stats.docs} documents (generation ${stats.generation}).`);
      }
      return EXIT_OK;
    } finally {
      bar.finish();
      await corpora.close();
    }
  });
}
