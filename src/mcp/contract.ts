/**
 * The binary RPC's contract as an MCP resource: every `.proto` file under the repository's `contract/`
 * (sorted by path, each preceded by a comment naming it — the same text as `GET /api/rpc.contract?format=proto`),
 * read when the resource is read, so it appears once the contract exists.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { RpcContract } from './quarry.js';

/** The contract's sources, or undefined while `dir` holds no `.proto` file. */
export function readContract(dir: string): RpcContract | undefined {
  const files: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try { names = readdirSync(d); } catch { return; }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.proto')) files.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  if (files.length === 0) return undefined;
  files.sort();
  return { mimeType: 'text/x-protobuf', text: files.map((f) => `// ===== ${f} =====\n${readFileSync(join(dir, f), 'utf8')}`).join('\n') };
}
