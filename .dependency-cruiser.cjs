/**
 * The layering of src/ (docs/architecture.md), checked by test/architecture/layering.test.ts:
 *
 *   faces        rest/ cli/ mcp/ rpc/ ui/ (the web UI's pages; web/ holds its browser scripts)      translate requests into service calls
 *   services     search/ corpora/ auth/ control/ events/ crawl/ trusted/ documents/ rollup/   hold every rule, audit, publish
 *   engine store engine/ (the search engine library), store/ (SQLite)
 *   transport    http/ (TLS server, router, error wire form, limits) — known to faces only
 *   kernel       kernel/ — the shared vocabulary every layer may import; imports nothing else
 *
 * An import may only point down; `src/service.ts` is the composition root that wires them all.
 * Checked by scripts/check-layers.mjs (the paths it sees end in .js).
 */
const SERVICES = '(search|corpora|auth|control|events|crawl|trusted|documents|rollup)';
const FACES = '(rest|cli|mcp|rpc|ui)';

module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'A cycle makes two modules one; break it with a smaller interface.',
      from: { path: '^src/' }, to: { circular: true } },
    { name: 'resolvable', severity: 'error', comment: 'Every relative import resolves to a file.',
      from: { path: '^src/' }, to: { couldNotResolve: true } },
    { name: 'kernel-is-a-leaf', severity: 'error', comment: 'The kernel is imported by every layer, so it imports none.',
      from: { path: '^src/kernel/' }, to: { path: '^src/', pathNot: '^src/kernel/' } },
    { name: 'engine-is-self-contained', severity: 'error', comment: 'The engine is a library: itself and the kernel only.',
      from: { path: '^src/engine/' }, to: { path: '^src/', pathNot: '^src/(engine|kernel)/' } },
    { name: 'store-is-below-services', severity: 'error',
      from: { path: '^src/store/' }, to: { path: '^src/', pathNot: '^src/(store|kernel)/' } },
    { name: 'http-is-transport-only', severity: 'error', comment: 'Transport knows no service and no face.',
      from: { path: '^src/http/' }, to: { path: '^src/', pathNot: '^src/(http|kernel)/' } },
    { name: 'services-know-no-face', severity: 'error', comment: 'Libraries and application services import no face and no transport.',
      from: { path: `^src/${SERVICES}/` }, to: { path: [`^src/${FACES}/`, '^src/http/', '^src/service\\.js$'] } },
    { name: 'faces-are-independent', severity: 'error', comment: 'A face imports services, transport and the kernel — not another face.',
      from: { path: `^src/${FACES}/` }, to: { path: `^src/${FACES}/`, pathNot: '^src/$1/' } },
    { name: 'composition-root-is-not-a-library', severity: 'error', comment: 'Only the serve command starts the whole service.',
      from: { path: '^src/', pathNot: ['^src/cli/serve\\.js$', '^src/service\\.js$'] }, to: { path: '^src/service\\.js$' } },
  ],
  options: {
    // Run through scripts/check-layers.mjs, which hands dependency-cruiser the sources as JavaScript.
    doNotFollow: { path: 'node_modules' },
    // Package subpaths (`@bufbuild/protobuf/wkt`) resolve through their package's `exports`.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};
