// The layering of src/ (.dependency-cruiser.cjs, docs/architecture.md) holds for the real tree, and the
// rule set does catch what it forbids: a tree with one deliberately broken import per rule fails it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICruiseResult } from 'dependency-cruiser';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** The violations of the project's rule set over `<baseDir>/src`, by the dependency-cruiser CLI. */
async function violations(baseDir: string): Promise<string[]> {
  const r = spawnSync(process.execPath, [CLI, 'src', '--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd: baseDir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000,
  });
  assert.ok(r.stdout.startsWith('{'), `dependency-cruiser failed (exit ${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as ICruiseResult;
  assert.ok(out.summary.totalCruised > 0, 'the cruise read some modules');
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

test('src/ keeps its layering: no cycles, no import pointing up, faces independent', async () => {
  assert.deepEqual(await violations(ROOT), []);
});

test('the rule set fails a tree with a forbidden import for each rule', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-layering-'));
  const file = (path: string, imports: string[]) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), imports.map((i) => `import '${i}';`).join('\n') + '\nexport const x = 1;\n');
  };
  try {
    file('src/kernel/errors.ts', []);
    file('src/kernel/vocab.ts', ['../engine/a.js']);            // kernel-is-a-leaf
    file('src/engine/a.ts', ['../kernel/errors.js', '../http/server.js']); // engine-is-self-contained
    file('src/engine/b.ts', ['./c.js']);                         // no-cycles (b ↔ c)
    file('src/engine/c.ts', ['./b.js']);
    file('src/store/db.ts', ['../control/x.js']);                // store-is-below-services
    file('src/http/server.ts', ['../search/service.js']);        // http-is-transport-only
    file('src/search/service.ts', ['../rest/search.js']);        // services-know-no-face
    file('src/control/x.ts', ['../http/route.js']);              // services-know-no-face (transport)
    file('src/rest/search.ts', ['../cli/main.js']);              // faces-are-independent
    file('src/cli/main.ts', ['../service.js', './missing.js']);  // composition-root + resolvable
    file('src/service.ts', ['./rest/search.js']);
    file('src/http/route.ts', []);
    const found = await violations(dir);
    const rules = new Set(found.map((v) => v.split(':')[0]));
    for (const rule of ['kernel-is-a-leaf', 'engine-is-self-contained', 'no-cycles', 'store-is-below-services', 'http-is-transport-only',
      'services-know-no-face', 'faces-are-independent', 'composition-root-is-not-a-library', 'resolvable']) {
      assert.ok(rules.has(rule), `rule ${rule} did not fire; violations:\n${found.join('\n')}`);
    }
    assert.ok(found.includes('services-know-no-face: src/control/x.ts → src/http/route.ts'), found.join('\n'));
    assert.ok(!found.some((v) => v.startsWith('faces-are-independent: src/service.ts')), 'the composition root may import faces');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
