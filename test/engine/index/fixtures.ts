/** Shared by the index tests: temporary index directories and a plain in-memory reading of an index. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Index } from '../../../src/engine/index/index.js';

export function tempDir(t: { after(fn: () => void): void }, prefix = 'quarry-index-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface LiveDoc {
  title: string;
  text: string;
  url?: string;
  host?: string;
}

/** Every live document of the index's current snapshot, by cid (asserting each cid is live once). */
export function liveDocuments(index: Index): Map<bigint, LiveDoc> {
  const out = new Map<bigint, LiveDoc>();
  for (const seg of index.snapshot().segments) {
    for (let d = 0; d < seg.maxDoc; d++) {
      if (!seg.isLive(d)) continue;
      const s = seg.stored(d);
      if (out.has(s.cid)) throw new Error(`cid ${s.cid} is live twice`);
      if (seg.docForCid(s.cid) !== d) throw new Error(`docForCid(${s.cid}) does not find slot ${d} of ${seg.name}`);
      const doc: LiveDoc = { title: s.title, text: s.text };
      if (s.url !== undefined) doc.url = s.url;
      if (s.host !== undefined) doc.host = s.host;
      out.set(s.cid, doc);
    }
  }
  return out;
}
