/**
 * The commit point: `MANIFEST` names the generation, its segments and each segment's current deletes
 * file. It is JSON with a binary footer (QMAN, CRC32), written to a temporary file, fsynced, renamed
 * over the previous one and the directory fsynced: a reader sees either the old commit or the new one,
 * whole. Everything it names was made durable before it was written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError } from '../../kernel/errors.js';
import { utf8Decoder, utf8Encoder } from './bytes.js';
import { faultPoint, fsyncDir, writeFileDurable } from './directory.js';
import { MAGIC, verifiedPayload, withFooter } from './footer.js';

export const MANIFEST_FILE = 'MANIFEST';

export interface ManifestSegment {
  name: string;
  maxDoc: number;
  /** Number of deleted docs; 0 ⇔ `deletes` is null. */
  deleted: number;
  /** Current deletes file name, or null when no doc of the segment is deleted. */
  deletes: string | null;
  /** Bytes of the segment's `.idx` + `.sto` (merge policy input). */
  bytes: number;
}

export interface Manifest {
  generation: number;
  /** Number for the next segment name; segment names are never reused by a later commit. */
  nextSegment: number;
  segments: ManifestSegment[];
  /** Live documents over all segments. */
  docs: number;
}

export const EMPTY_MANIFEST: Manifest = { generation: 0, nextSegment: 1, segments: [], docs: 0 };

/** Segment files are named from the manifest's counter (`nextSegment`), so a name is never reused. */
const SEGMENT_PREFIX = 'seg_';

/** The name of segment number `n`: the prefix of its files, e.g. `seg_000012`. */
export function segmentName(n: number): string {
  return `${SEGMENT_PREFIX}${String(n).padStart(6, '0')}`;
}

/** Whether `file` belongs to a segment (its files or its deletes files), by name. */
export function isSegmentFile(file: string): boolean {
  return file.startsWith(SEGMENT_PREFIX);
}

/** The current manifest of `dir`, or null when the directory holds no commit yet. */
export function readManifest(dir: string): Manifest | null {
  let file: Buffer;
  try {
    file = readFileSync(join(dir, MANIFEST_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const payload = verifiedPayload(file, MAGIC.manifest, MANIFEST_FILE);
  let m: Manifest;
  try {
    m = JSON.parse(utf8Decoder.decode(payload)) as Manifest;
  } catch (err) {
    throw new InternalError(`MANIFEST in ${dir} is not valid JSON.`, { cause: err });
  }
  if (!Number.isSafeInteger(m.generation) || !Array.isArray(m.segments)) throw new InternalError(`MANIFEST in ${dir} lacks generation or segments.`);
  return m;
}

/** Switches the commit point: durable when this returns. */
export function writeManifest(dir: string, m: Manifest): void {
  const bytes = withFooter(utf8Encoder.encode(JSON.stringify(m)), MAGIC.manifest);
  writeFileDurable(dir, MANIFEST_FILE, bytes);
  faultPoint('manifest-renamed');
  fsyncDir(dir);
}

export function manifestFiles(m: Manifest): Set<string> {
  const out = new Set<string>([MANIFEST_FILE]);
  for (const s of m.segments) {
    out.add(s.name + '.idx');
    out.add(s.name + '.sto');
    if (s.deletes !== null) out.add(s.deletes);
  }
  return out;
}
