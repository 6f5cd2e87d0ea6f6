// Builds a tiny Node HTTP service: validates config.json and copies the server next to it in out/.
// Deterministic on purpose (no clock, no randomness): the same inputs give the same artifact digest.
// Replace this directory with your real service; the control plane only needs `out/` and recipe.json.
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';

const config = JSON.parse(readFileSync('config.json', 'utf8'));
if (typeof config.name !== 'string' || config.name === '') throw new Error('config.json: "name" is required');
mkdirSync('out', { recursive: true });
copyFileSync('server.mjs', 'out/server.mjs');
// Keys sorted so a reformatted config.json with the same meaning builds the same bytes.
writeFileSync('out/config.json', JSON.stringify(config, Object.keys(config).sort(), 2) + '\n');
console.log(`built ${config.name}: server.mjs + config.json`);
