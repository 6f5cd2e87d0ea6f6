// Entry point of a search-pool worker thread (src/search/pool.ts): like bin/quarry.js it runs the
// TypeScript sources through tsx's loader, which a worker thread does not inherit from the main thread.
import { register } from 'tsx/esm/api';

register();
const { default: run } = await import('../src/search/worker.ts');
export default run;
