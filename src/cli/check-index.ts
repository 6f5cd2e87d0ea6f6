/**
 * `quarry check <index-dir>…`: the index consistency check (src/engine/index/check.ts) from the command
 * line — every footer and checksum and the invariants the query side relies on. Exit 0 when every
 * directory is consistent, 1 when any is not, 2 on usage errors.
 */
import { existsSync, statSync } from 'node:fs';
import { checkIndex } from '../engine/index/index.js';

export async function run(args: string[]): Promise<number> {
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    console.log('usage: quarry check <index-dir>...   verify an index directory (checksums and invariants)');
    return args.length === 0 ? 2 : 0;
  }
  let failed = false;
  for (const dir of args) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      console.error(`quarry check: ${dir} is not a directory`);
      return 2;
    }
    const r = checkIndex(dir);
    if (r.ok) console.log(`${dir}: ok — generation ${r.generation}, ${r.docs} documents in ${r.segments} segments`);
    else {
      failed = true;
      console.log(`${dir}: DAMAGED — ${r.problems.length} problem(s)`);
      for (const p of r.problems) console.log(`  ${p}`);
    }
  }
  return failed ? 1 : 0;
}
