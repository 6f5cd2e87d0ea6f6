// The conformance CLI imports `globSync` from `fs`, which Node 22 added; on Node 20 the import fails at
// link time. This loader hook hands that package a copy of `fs` with a `globSync` that throws (server
// mode never calls it). Used only by test/mcp: `node --import ./node20-fs-glob.mjs <cli>`.
import { register } from 'node:module';

if (Number(process.versions.node.split('.')[0]) < 22) {
  register('data:text/javascript,' + encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
        return { url: 'data:text/javascript,' + encodeURIComponent(
          "export * from 'node:fs'; import fs from 'node:fs'; export default fs;" +
          "export function globSync() { throw new Error('fs.globSync needs Node 22'); }"), shortCircuit: true };
      }
      return next(specifier, context);
    }`), import.meta.url);
}
