/**
 * The `quarry` command: one dispatcher, one module per command group. Each module exports
 * `run(args: string[]): Promise<number>` (the exit code). Commands are loaded lazily so `quarry search`
 * does not pay for the control plane's imports.
 */
type CommandModule = { run(args: string[]): Promise<number> };

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  serve: { summary: 'run the HTTPS service', load: () => import('./serve.js') },
  index: { summary: 'index the own corpus from its configured sources (only what changed)', load: () => import('./index-command.js') },
  import: { summary: 'import JSONL (BEIR) or WARC files into a corpus', load: () => import('./import.js') },
  crawl: { summary: 'crawl the web from seed URLs into WARC files and the web corpus (resumable)', load: () => import('./crawl.js') },
  search: { summary: 'search a corpus from the command line', load: () => import('./search.js') },
  doc: { summary: 'print one document by cid', load: () => import('./doc.js') },
  suggest: { summary: 'complete a word from a corpus', load: () => import('./suggest.js') },
  stats: { summary: 'show the size of each corpus', load: () => import('./stats.js') },
  merge: { summary: 'merge a corpus into one segment (or a few) after a bulk load', load: () => import('./merge.js') },
  check: { summary: 'verify an index directory (checksums and invariants)', load: () => import('./check-index.js') },
  user: { summary: 'add, list or disable accounts (local, on the data directory)', load: async () => (await import('./auth.js')).user },
  invite: { summary: 'create an invite code for a new account', load: async () => (await import('./auth.js')).invite },
  cap: { summary: 'mint, list or revoke capabilities (local, on the data directory)', load: async () => (await import('./auth.js')).cap },
  login: { summary: 'log in to a running server with OPAQUE and print the capability', load: async () => (await import('./auth.js')).login },
  build: { summary: 'build a managed target from its recipe (control plane)', load: async () => (await import('./control.js')).build },
  stage: { summary: 'stage a built version or upload an artifact', load: async () => (await import('./control.js')).stage },
  deploy: { summary: 'promote a staged version of a target', load: async () => (await import('./control.js')).deploy },
  status: { summary: 'version verdicts of the managed targets', load: async () => (await import('./control.js')).status },
  rollback: { summary: 'move a target back to its previous (or a named) version', load: async () => (await import('./control.js')).rollback },
  reconcile: { summary: 'repair drift of one target or all', load: async () => (await import('./control.js')).reconcile },
  restart: { summary: 'restart the live version of a service target', load: async () => (await import('./control.js')).restart },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'usage: quarry <command> [options]   (quarry <command> --help for its options)',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`quarry: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest);
}

const code = await main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`quarry: ${(err as Error)?.message ?? String(err)}`);
  return 1;
});
process.exitCode = code;
