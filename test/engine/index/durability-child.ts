/**
 * The child of the durability test (test/engine/durability.test.ts): opens the index in argv[2], takes
 * the writer lock (the previous child was SIGKILLed, so it is stale), reconstructs its model from the
 * index, then commits random batches forever. Before each commit it writes `BEGIN <generation>
 * <digest>` (the digest of the live set that commit must produce) and after `commit()` resolves `DONE
 * <generation>`, with synchronous writes, so the parent knows exactly which commits may be on disk.
 */
import { writeSync } from 'node:fs';
import { Index } from '../../../src/engine/index/index.js';
import { digestOf } from './durability-digest.js';

const dir = process.argv[2]!;
let seed = Number(process.argv[3] ?? 1) >>> 0;
function rand(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega debian package kernel module install'.split(' ');
function text(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]!);
  return out.join(' ');
}

const index = await Index.open(dir, { mergeFactor: 3, mergeFloorBytes: 4096, maxBufferedBytes: 64 * 1024, storedBlockBytes: 2048 });
const writer = await index.openWriter();
const model = new Map<bigint, { title: string; text: string }>();
for (const seg of index.snapshot().segments) {
  for (let d = 0; d < seg.maxDoc; d++) {
    if (!seg.isLive(d)) continue;
    const s = seg.stored(d);
    model.set(s.cid, { title: s.title, text: s.text });
  }
}
let generation = index.snapshot().generation;
writeSync(1, `READY ${generation}\n`);
for (;;) {
  const ops = 1 + Math.floor(rand() * 40);
  for (let k = 0; k < ops; k++) {
    const cid = BigInt(Math.floor(rand() * 500));
    if (rand() < 0.2) {
      writer.delete(cid);
      model.delete(cid);
    } else {
      const doc = { title: `g${generation + 1} c${cid} r${Math.floor(rand() * 1e9)}`, text: text(1 + Math.floor(rand() * (rand() < 0.1 ? 3000 : 60))) };
      writer.upsert({ cid, ...doc, host: 'docs.example.org' });
      model.set(cid, doc);
    }
  }
  generation++;
  writeSync(1, `BEGIN ${generation} ${digestOf(model)}\n`);
  const info = await writer.commit();
  if (info.generation !== generation) throw new Error(`commit produced generation ${info.generation}, expected ${generation}`);
  writeSync(1, `DONE ${generation}\n`);
}
