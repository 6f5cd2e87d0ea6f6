/**
 * `quarry stats`: documents, segments, generation and size of each corpus of a data directory
 * (read-only; a corpus never created shows as absent).
 */
import { SCOPES, type Scope } from '../kernel/scope.js';
import { COMMON_OPTIONS, EXIT_OK, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, hasIndex, openIndexReadOnly } from './corpus-access.js';

const USAGE = `usage: quarry stats [--corpus own|web|trusted] [--data DIR] [--json]

Shows the size of every corpus (or of one).`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('stats', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, { ...COMMON_OPTIONS, ...CORPUS_OPTIONS });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}.`);
    const dataDir = resolveDataDir(values.data);
    const scopes: readonly Scope[] = values.corpus ?? values.scope ? [corpusOption(values)] : SCOPES;
    const corpora: Record<string, { exists: boolean; docs: number; segments: number; generation: number; bytes: number; error?: string }> = {};
    for (const scope of scopes) {
      if (!hasIndex(dataDir, scope)) { corpora[scope] = { exists: false, docs: 0, segments: 0, generation: 0, bytes: 0 }; continue; }
      let index;
      try {
        index = await openIndexReadOnly(dataDir, scope);
      } catch (err) {
        // One unreadable corpus must not hide the others' figures.
        corpora[scope] = { exists: true, docs: 0, segments: 0, generation: 0, bytes: 0, error: (err as Error).message };
        continue;
      }
      try { corpora[scope] = { exists: true, ...index.stats() }; } finally { await index.close(); }
    }
    if (json) { printJsonLine({ v: 1, data: dataDir, corpora }); return EXIT_OK; }
    console.log(`data directory ${dataDir}`);
    console.log(`${'corpus'.padEnd(8)} ${'docs'.padStart(10)} ${'segments'.padStart(9)} ${'generation'.padStart(11)} ${'size'.padStart(10)}`);
    for (const [scope, s] of Object.entries(corpora)) {
      if (!s.exists) { console.log(`${scope.padEnd(8)} ${'(none)'.padStart(10)}`); continue; }
      if (s.error !== undefined) { console.log(`${scope.padEnd(8)} ${'unreadable'.padStart(10)}  ${s.error}`); continue; }
      const size = s.bytes >= 1048576 ? `${(s.bytes / 1048576).toFixed(1)} MiB` : `${(s.bytes / 1024).toFixed(1)} KiB`;
      console.log(`${scope.padEnd(8)} ${s.docs.toLocaleString('en-US').padStart(10)} ${String(s.segments).padStart(9)} ${String(s.generation).padStart(11)} ${size.padStart(10)}`);
    }
    return EXIT_OK;
  });
}
