#!/usr/bin/env node
// Entry point of the `quarry` command: the compiled CLI in dist/ (`npm ci` builds it; so does `npm run build`).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('quarry: dist/ is not built yet; run `npm run build` (npm ci and npm start build it too).');
  process.exit(1);
}
await import(main.href);
