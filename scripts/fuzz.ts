// The project's fuzz suite from the command line (test/fuzz/runner.ts says what it sends and checks):
//   npm run fuzz -- --seed 7 --count 1000000            a long run; prints progress, then the report as JSON
//   npm run fuzz -- --seed 7 --count 20000 --only 1234  replays input 1234 of that run alone
//   npm run fuzz -- --seed 7 --count 50000 --kinds upload,rpc  draws inputs of these kinds only
// Options: --concurrency N (default 24), --deadline-ms N (per input, default 15000), --rss-bound-mib N
// (default 512), --duration-s N (stop drawing inputs after N seconds; the report counts those that ran).
// Exit code 0 when nothing failed, 1 otherwise.
import { parseArgs } from 'node:util';
import { runFuzz } from '../test/fuzz/runner.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' }, count: { type: 'string' }, concurrency: { type: 'string' },
    'deadline-ms': { type: 'string' }, 'duration-s': { type: 'string' }, 'rss-bound-mib': { type: 'string' }, only: { type: 'string' },
    kinds: { type: 'string' },
  },
});
const num = (v: string | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got ${v}`);
  return n;
};
const seed = num(values.seed, 'seed') ?? Math.floor(Math.random() * 2 ** 31);
const count = num(values.count, 'count') ?? 20_000;
const concurrency = num(values.concurrency, 'concurrency');
const deadlineMs = num(values['deadline-ms'], 'deadline-ms');
const rssBoundMiB = num(values['rss-bound-mib'], 'rss-bound-mib');
const durationS = num(values['duration-s'], 'duration-s');
console.error(`fuzz: seed ${seed}, ${count} inputs`);
const report = await runFuzz({
  seed, count,
  ...(concurrency !== undefined ? { concurrency } : {}),
  ...(deadlineMs !== undefined ? { deadlineMs } : {}),
  ...(rssBoundMiB !== undefined ? { rssBoundMiB } : {}),
  ...(durationS !== undefined ? { maxDurationMs: durationS * 1000 } : {}),
  ...(values.kinds !== undefined ? { kinds: values.kinds.split(',').map((s) => s.trim()) } : {}),
  ...(values.only !== undefined ? { only: values.only.split(',').map((s) => num(s, 'only')!) } : {}),
  progress: (line) => console.error(line),
});
console.log(JSON.stringify(report, null, 2));
process.exit(report.failureCount === 0 ? 0 : 1);
