#!/usr/bin/env node
// Scaffolds a source directory deploy/targets/<name>/ for every allowlisted target that has none yet,
// from deploy/templates/{static,service}/. It never overwrites: once a directory exists it belongs to
// whoever replaces it with the real source. A new target is a `service` unless named with --static.
// The directory's recipe.json is what the control plane reads; this script lists no targets itself
// (the allowlist does), so the 41 shipped directories are simply the ones it made once.
//   node deploy/generate.mjs                 scaffold missing targets as services
//   node deploy/generate.mjs --static name   scaffold `name` as a static page bundle
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const STATIC = new Set();
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) if (args[i] === '--static' && args[i + 1]) STATIC.add(args[++i]);

const names = readFileSync(join(here, 'allowlist.txt'), 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
let created = 0;
for (const name of names) {
  const dir = join(here, 'targets', name);
  if (existsSync(dir)) continue;
  const kind = STATIC.has(name) ? 'static' : 'service';
  const template = join(here, 'templates', kind);
  mkdirSync(dir, { recursive: true });
  const title = name.replace(/[_.]/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());
  for (const file of readdirSync(template).sort()) {
    const raw = readFileSync(join(template, file), 'utf8');
    const text = file.endsWith('.mjs') ? raw : raw.replaceAll('{{name}}', name).replaceAll('{{title}}', title);
    writeFileSync(join(dir, file), text);
  }
  created++;
}
console.log(`${created} target source(s) scaffolded, ${names.length - created} already present`);
