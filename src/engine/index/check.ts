/**
 * The consistency check: reads the current commit of an index directory from disk, independently of
 * any open `Index`, and verifies every footer and CRC and the invariants the query side relies on —
 * terms strictly ascending, postings strictly ascending within maxDoc with `docFreq` entries, freqs ≥ 1,
 * positions ascending and `freq` of them, block and term impact summaries exact, stored documents
 * decodable with the segment's cids, deletes sized to their segment, manifest counts right, and every
 * cid live in at most one place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { countDeleted, readDeletes } from './deletes.js';
import { readFooter } from './footer.js';
import { readManifest } from './manifest.js';
import { isDeleted, SegmentCore, SegmentView, STO_EXT } from './segment-reader.js';
import { storeMagic } from './store.js';
import { BLOCK_SIZE, NO_MORE_DOCS, hasPositions } from './types.js';

export interface CheckReport {
  ok: boolean;
  /** One sentence per problem found (empty when ok). */
  problems: string[];
  generation: number;
  docs: number;
  segments: number;
}

const MAX_PROBLEMS = 50;

export function checkIndex(dir: string): CheckReport {
  const problems: string[] = [];
  const report = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  let manifest;
  try {
    manifest = readManifest(dir);
  } catch (err) {
    return { ok: false, problems: [`MANIFEST: ${(err as Error).message}`], generation: -1, docs: 0, segments: 0 };
  }
  if (manifest === null) return { ok: true, problems, generation: 0, docs: 0, segments: 0 };
  const seen = new Map<bigint, string>();
  let live = 0;
  const names = new Set<string>();
  for (const s of manifest.segments) {
    if (names.has(s.name)) report(`MANIFEST lists ${s.name} twice.`);
    names.add(s.name);
    let core: SegmentCore;
    try {
      core = new SegmentCore(dir, s.name);
    } catch (err) {
      report(`${s.name}: ${(err as Error).message}`);
      continue;
    }
    try {
      checkStoreCrc(dir, s.name + STO_EXT, report);
      if (core.maxDoc !== s.maxDoc) report(`${s.name}: maxDoc ${core.maxDoc}, MANIFEST says ${s.maxDoc}.`);
      let bits = null;
      if (s.deletes !== null) {
        try {
          bits = readDeletes(dir, s.deletes, core.maxDoc);
          if (countDeleted(bits) !== s.deleted) report(`${s.deletes}: ${countDeleted(bits)} deleted docs, MANIFEST says ${s.deleted}.`);
        } catch (err) {
          report(`${s.deletes}: ${(err as Error).message}`);
        }
      } else if (s.deleted !== 0) report(`${s.name}: MANIFEST counts ${s.deleted} deletes but names no deletes file.`);
      const view = new SegmentView(core, bits);
      live += view.liveDocs;
      checkSegment(core, report);
      for (let d = 0; d < core.maxDoc; d++) {
        const cid = core.cids[d]!;
        if (isDeleted(bits, d)) continue;
        // a cid upserted twice before one flush occupies two slots; only the last may be live
        if (core.docForCidAnyState(cid) !== d) report(`${s.name}: cid ${cid} is live in slot ${d} but a later slot holds it too.`);
        const other = seen.get(cid);
        if (other !== undefined) report(`cid ${cid} is live in both ${other} and ${s.name}.`);
        seen.set(cid, s.name);
        try {
          core.heads.get(d);
          core.store.get(d);
        } catch (err) {
          report(`${s.name}: stored doc ${d}: ${(err as Error).message}`);
        }
      }
    } finally {
      core.close();
    }
  }
  if (live !== manifest.docs) report(`MANIFEST counts ${manifest.docs} live docs, the segments hold ${live}.`);
  return { ok: problems.length === 0, problems, generation: manifest.generation, docs: live, segments: manifest.segments.length };
}

function checkStoreCrc(dir: string, file: string, report: (p: string) => void): void {
  const bytes = readFileSync(join(dir, file));
  try {
    const stored = readFooter(bytes, storeMagic(bytes), file);
    if ((crc32(bytes.subarray(0, bytes.length - 4)) >>> 0) !== stored) report(`${file} fails its checksum.`);
  } catch (err) {
    report(`${file}: ${(err as Error).message}`);
  }
}

function checkSegment(core: SegmentCore, report: (p: string) => void): void {
  const name = core.name;
  const terms = core.terms;
  const ascending = (list: Iterable<string>, what: string): void => {
    let prev: string | undefined;
    for (const t of list) {
      if (prev !== undefined && !(prev < t)) {
        report(`${name}: ${what} not strictly ascending at ${JSON.stringify(t)}.`);
        return;
      }
      prev = t;
    }
  };
  ascending(terms, 'terms');
  ascending(core.surfaces.read().forms, 'surface forms');
  for (let ord = 0; ord < terms.length; ord++) {
    const term = terms.at(ord);
    const positioned = hasPositions(term);
    try {
      const c = core.cursor(ord, true, true);
      let n = 0;
      let prev = -1;
      let maxF = 0;
      let minL = Infinity;
      let blockMaxF = 0;
      let blockMinL = Infinity;
      for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
        if (n % BLOCK_SIZE === 0) {
          c.shallowAdvance(d);
          blockMaxF = c.blockMaxFreq();
          blockMinL = c.blockMinLength();
        }
        n++;
        if (d <= prev || d >= core.maxDoc) throw new Error(`doc ${d} after ${prev} (maxDoc ${core.maxDoc})`);
        prev = d;
        const f = c.freq();
        if (f < 1) throw new Error(`freq ${f} in doc ${d}`);
        const len = core.lengths[d]!;
        if (f > blockMaxF || len < blockMinL) throw new Error(`block impact summary does not bound doc ${d}`);
        maxF = Math.max(maxF, f);
        minL = Math.min(minL, len);
        if (positioned) {
          const pos = c.positions();
          if (pos.length !== f) throw new Error(`doc ${d} has ${pos.length} positions for freq ${f}`);
          for (let k = 1; k < pos.length; k++) if (pos[k]! <= pos[k - 1]!) throw new Error(`positions not ascending in doc ${d}`);
        }
      }
      const df = core.termInfo(ord).docFreq;
      if (n !== df) throw new Error(`${n} postings, docFreq says ${df}`);
      if (n > 0 && (maxF !== c.maxFreq || minL !== c.minLength)) throw new Error('term impact summary is not exact');
    } catch (err) {
      report(`${name}: term ${JSON.stringify(term)}: ${(err as Error).message}`);
    }
  }
  core.endSequential();
}
