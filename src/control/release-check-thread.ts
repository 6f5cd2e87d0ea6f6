/**
 * The thread of `ReleaseChecker` (./release-checker.ts): checks live releases against their manifests
 * with one `ReleaseVerifier`, whose per-file hash cache lives here. Every reconcile and observation of all
 * targets walks every live release and reads its manifest, which on the event loop that serves search
 * was the largest share of the control plane's time there. This thread runs at the lowest CPU priority
 * (on Linux the nice value is per thread): it is background work on the cores that serve search.
 */
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import type { ReleaseManifest } from './releases.js';
import { ReleaseVerifier } from './release-verifier.js';
import { LOWEST_NICE, lowerThreadPriority } from '../kernel/thread-priority.js';

/** A request of the main thread; `check` and `hashed` are answered with the same `id`. */
export type CheckRequest =
  | { id: number; op: 'check'; manifestPath: string; dir: string }
  | { id: number; op: 'hashed' }
  | { op: 'forget'; dir: string };

export type CheckAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

lowerThreadPriority(LOWEST_NICE);

const verifier = new ReleaseVerifier();
const port = parentPort!;

/** The paths of `dir` that differ from the manifest; undefined when the manifest is unreadable or `dir` is missing. */
async function check(manifestPath: string, dir: string): Promise<string[] | undefined> {
  let manifest: ReleaseManifest;
  try { manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as ReleaseManifest; } catch { return undefined; }
  return verifier.diff(dir, manifest.files);
}

port.on('message', (req: CheckRequest) => {
  if (req.op === 'forget') { verifier.forget(req.dir); return; }
  const answer = req.op === 'hashed' ? Promise.resolve(verifier.hashed) : check(req.manifestPath, req.dir);
  answer.then(
    (value) => port.postMessage({ id: req.id, ok: true, value } satisfies CheckAnswer),
    (err: unknown) => port.postMessage({ id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies CheckAnswer),
  );
});
