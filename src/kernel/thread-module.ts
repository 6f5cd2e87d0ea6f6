/**
 * Where a worker thread's module is. A worker thread inherits no TypeScript loader, so it always runs
 * what the build made: the compiled sibling beside the calling module in the built server
 * (`dist/<dir>/<name>.js`), and the same file under `dist/` when the caller runs from `src/` (the tests;
 * `npm start` and `npm test` build first).
 */
export function threadModule(callerUrl: string, name: string): URL {
  const sibling = new URL(`./${name}.js`, callerUrl);
  if (!callerUrl.endsWith('.ts')) return sibling;
  const href = sibling.href;
  const at = href.lastIndexOf('/src/');
  if (at < 0) throw new Error(`${callerUrl} runs from source outside a src/ directory: no compiled ${name}.js to run.`);
  return new URL(`${href.slice(0, at)}/dist/${href.slice(at + '/src/'.length)}`);
}
