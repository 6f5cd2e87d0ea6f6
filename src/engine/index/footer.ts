/**
 * The footer every index file ends with: `u32 magic · u32 format version · u32 CRC32`, the CRC covering
 * every byte before it (payload, magic and version). A reader verifies magic and version before trusting
 * any offset in the file; the CRC is verified wherever the whole file is read anyway (term index,
 * deletes, manifest) and by the consistency check for the lazily read stored-fields file.
 */
import { crc32 } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';

export const FOOTER_BYTES = 12;
/**
 * The version files are written with. 2: a full postings block may patch exceptions (the high bits of
 * its two head bytes, always 0 in version 1, count them), so version 1 files read as they are, and a
 * version 1 build refuses version 2 files rather than misread them.
 */
export const FORMAT_VERSION = 2;
/** The oldest version this build reads. */
export const OLDEST_FORMAT_VERSION = 1;

/** File kinds, as four ASCII bytes read little-endian. */
export const MAGIC = {
  terms: 0x58444951, // "QIDX": term dictionary, postings, positions, lengths, cids, surface forms
  stored: 0x4f545351, // "QSTO": stored text as UTF-8 in Brotli blocks (written before the word model)
  wordStored: 0x57545351, // "QSTW": stored text as word codes in Brotli blocks, then the vocabulary
  deletes: 0x4c454451, // "QDEL": deleted-docs bitset of one segment at one generation
  manifest: 0x4e414d51, // "QMAN": the commit point
} as const;

/** Appends the footer to `payload` and returns the complete file bytes. */
export function withFooter(payload: Uint8Array, magic: number): Buffer {
  return Buffer.concat([payload, footerAfter(crc32(payload), magic)]);
}

/** The footer of a file whose bytes before it have the CRC32 `payloadCrc` (carried over them in pieces). */
export function footerAfter(payloadCrc: number, magic: number): Uint8Array {
  const f = Buffer.alloc(FOOTER_BYTES);
  f.writeUInt32LE(magic >>> 0, 0);
  f.writeUInt32LE(FORMAT_VERSION, 4);
  f.writeUInt32LE(crc32(f.subarray(0, 8), payloadCrc) >>> 0, 8);
  return f;
}

/** Checks magic and version of a footer's 12 bytes; returns the stored CRC. */
export function readFooter(footer: Uint8Array, magic: number, file: string): number {
  if (footer.length < FOOTER_BYTES) throw new InternalError(`Index file ${file} is too short to hold a footer.`);
  const b = Buffer.from(footer.buffer, footer.byteOffset + footer.length - FOOTER_BYTES, FOOTER_BYTES);
  const m = b.readUInt32LE(0);
  if (m !== magic >>> 0) throw new InternalError(`Index file ${file} has magic ${m.toString(16)}, expected ${(magic >>> 0).toString(16)}.`);
  const v = b.readUInt32LE(4);
  if (v < OLDEST_FORMAT_VERSION || v > FORMAT_VERSION) throw new InternalError(`Index file ${file} has format version ${v}; this build reads ${OLDEST_FORMAT_VERSION} to ${FORMAT_VERSION}.`);
  return b.readUInt32LE(8);
}

/** Verifies footer and CRC of a whole file held in memory; returns the payload (without footer). */
export function verifiedPayload(file: Uint8Array, magic: number, name: string): Uint8Array {
  const stored = readFooter(file, magic, name);
  const actual = crc32(file.subarray(0, file.length - 4)) >>> 0;
  if (actual !== stored) throw new InternalError(`Index file ${name} fails its checksum (stored ${stored.toString(16)}, computed ${actual.toString(16)}).`);
  return file.subarray(0, file.length - FOOTER_BYTES);
}
