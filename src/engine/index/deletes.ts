/**
 * Deleted-docs files: `<segment>.del_<generation>` holds the complete bitset of the segment's deleted
 * docs as of that commit (`u32 maxDoc · bitset · footer QDEL`). Segments are never modified; a commit
 * that deletes from a segment writes a new bitset file and the manifest names which one is current.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError } from '../../kernel/errors.js';
import { MAGIC, verifiedPayload, withFooter } from './footer.js';
import type { DeletedBits } from './segment-reader.js';

export function deletesFileName(segment: string, generation: number): string {
  return `${segment}.del_${String(generation).padStart(6, '0')}`;
}

export function encodeDeletes(bits: DeletedBits, maxDoc: number): Buffer {
  const payload = new Uint8Array(4 + bits.length);
  new DataView(payload.buffer).setUint32(0, maxDoc, true);
  payload.set(bits, 4);
  return withFooter(payload, MAGIC.deletes);
}

export function readDeletes(dir: string, file: string, maxDoc: number): DeletedBits {
  const payload = verifiedPayload(readFileSync(join(dir, file)), MAGIC.deletes, file);
  const n = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0, true);
  if (n !== maxDoc || payload.length !== 4 + Math.ceil(maxDoc / 8)) throw new InternalError(`Deletes file ${file} is for ${n} docs, the segment has ${maxDoc}.`);
  return payload.slice(4);
}

export function countDeleted(bits: DeletedBits): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) {
    let b = bits[i]!;
    while (b !== 0) {
      b &= b - 1;
      n++;
    }
  }
  return n;
}
