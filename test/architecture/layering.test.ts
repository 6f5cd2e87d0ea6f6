// The layering of src/ (.dependency-cruiser.cjs, docs/architecture.md) holds for the real tree, and the
// rule set does catch what it forbids: a tree with one deliberately broken import per rule fails it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The violations of the project's rule set over `<root>/src`, as `npm run check:layers` finds them. */
async function violations(root: string): Promise<string[]> {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/check-layers.mjs'), root, '--json'], {
    encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000,
  });
  assert.ok(r.stdout.startsWith('{'), `check-layers failed (exit ${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { modules: number; violations: string[] };
  assert.ok(out.modules > 0, 'the check read some modules');
  assert.equal(r.status, out.violations.length > 0 ? 1 : 0, 'the exit code says whether the rules hold');
  return out.violations;
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
    writeFileSync(join(dir, 'src/engine/typed.ts'), "import type { X } from '../rest/search.js';\nexport type Y = X;\n"); // a type-only import counts
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
    assert.ok(found.includes('engine-is-self-contained: src/engine/typed.ts → src/rest/search.ts'), `a type-only import is a dependency too:\n${found.join('\n')}`);
    assert.ok(!found.some((v) => v.startsWith('faces-are-independent: src/service.ts')), 'the composition root may import faces');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
