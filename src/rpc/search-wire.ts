/**
 * The binary forms of the messages on the search hot path, written directly: the `Call` envelope and the
 * `SearchRequest` it carries are read here, and `quarry.v1.SearchResponse`, the one message every search
 * over the RPC answers with, is written here.
 *
 * Reading: the two requests are a handful of bytes in their usual form (each field once, in any order,
 * with its declared wire type). The readers take that form and nothing else: anything they do not know
 * (an unknown or repeated field, a varint past the simple range, text that is not valid UTF-8)
 * gives undefined, and the caller decodes with the generic decoder, which keeps unknown fields and
 * words its own errors. So they never decide what a message means, only spare the descriptor walk.
 *
 * Writing: the generic encoder of `@bufbuild/protobuf` walks the descriptor for every field of every
 * result and measures every string before it writes it; this one writes each string once, straight into
 * a scratch buffer, after a length prefix reserved for the string's widest UTF-8 form, and narrows the
 * prefix when the string came out shorter (a nested result the same way), then copies the message out
 * once. Fields go in field-number order with proto3's rules: implicit fields at their zero value are left
 * out, `optional` ones are written when set. The output is the canonical encoding, byte for byte what
 * `toBinary(SearchResponseSchema, …)` writes.
 *
 * Tests hold both directions equal to the generic codec over generated messages, so a change to
 * search.proto or call.proto that this file does not follow fails them.
 */
import type { Call } from './gen/quarry/v1/call_pb.js';
import type { Result, Scope, SearchRequest, SearchResponse } from './gen/quarry/v1/search_pb.js';

/** Up to 2^53 a 64-bit value is written with number arithmetic, many times cheaper than bigint's. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** The scratch buffer's size at rest; one grown past `SCRATCH_KEPT` by a huge answer is not kept. */
const SCRATCH_BYTES = 64 * 1024;
const SCRATCH_KEPT = 1024 * 1024;

/** The message being written, `[0, pos)` of a scratch buffer that the writers share (they are synchronous). */
let buf = Buffer.allocUnsafe(SCRATCH_BYTES);
let pos = 0;

/** Makes room for `n` more bytes. */
function room(n: number): void {
  if (pos + n <= buf.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(bigger, 0, 0, pos);
  buf = bigger;
}

function varintAt(at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/** Bytes of the varint of `n` (a length: below 2^35). */
const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** A varint field of a non-negative number below 2^53; every tag here is one byte (fields below 16). */
function varintField(tag: number, n: number): void {
  room(9);
  buf[pos++] = tag;
  pos = varintAt(pos, n);
}

/** A uint64, or an int64 as its two's complement (ten bytes when negative). */
function varint64Field(tag: number, n: bigint): void {
  room(11);
  buf[pos++] = tag;
  if (n < 0n) n = BigInt.asUintN(64, n);
  if (n <= MAX_SAFE) {
    pos = varintAt(pos, Number(n));
    return;
  }
  while (n >= 0x80n) {
    buf[pos++] = Number(n & 0x7fn) | 0x80;
    n >>= 7n;
  }
  buf[pos++] = Number(n);
}

/**
 * Opens a length-delimited field whose content takes at most `max` bytes: room for the length's varint
 * at its widest for `max`, and for the content. `close` writes the length, moving the content back when
 * its length takes fewer bytes than reserved, so the encoding stays the minimal one.
 */
function open(field: number, max: number): number {
  room(1 + varintSize(max) + max);
  buf[pos++] = (field << 3) | 2;
  pos += varintSize(max);
  return pos;
}

function close(start: number, max: number): void {
  const length = pos - start;
  const reserved = varintSize(max);
  const size = varintSize(length);
  if (size !== reserved) {
    buf.copyWithin(start - reserved + size, start, pos);
    pos -= reserved - size;
  }
  varintAt(start - reserved, length);
}

/** A string field: UTF-8 takes at most three bytes per UTF-16 code unit (a lone surrogate becomes U+FFFD, as TextEncoder writes it). */
function text(field: number, s: string): void {
  const max = 3 * s.length;
  const start = open(field, max);
  pos += buf.write(s, pos, max, 'utf8');
  close(start, max);
}

function result(r: Result): void {
  const max = 2 * 11 + 5 * 6 + 3 * (r.title.length + (r.snippet?.length ?? 0) + r.doc.length + (r.url?.length ?? 0) + (r.host?.length ?? 0));
  const start = open(6, max);
  if (r.cid !== 0n) varint64Field(0x08, r.cid);
  if (r.score !== 0n) varint64Field(0x10, r.score);
  if (r.title !== '') text(3, r.title);
  if (r.snippet !== undefined) text(4, r.snippet);
  if (r.doc !== '') text(5, r.doc);
  if (r.url !== undefined) text(6, r.url);
  if (r.host !== undefined) text(7, r.host);
  close(start, max);
}

/** `SearchResponse` in the protobuf binary format. */
export function encodeSearchResponse(m: SearchResponse): Buffer {
  pos = 0;
  if (m.query !== '') text(1, m.query);
  // an enum is an int32: a negative one is written as its 64-bit two's complement
  if (m.scope !== 0) {
    if (m.scope < 0) varint64Field(0x10, BigInt(m.scope));
    else varintField(0x10, m.scope);
  }
  if (m.page !== 0) varintField(0x18, m.page);
  if (m.total !== 0n) varint64Field(0x20, m.total);
  if (m.nresults !== 0) varintField(0x28, m.nresults);
  for (const r of m.results) result(r);
  if (m.phraseExact !== undefined) varintField(0x38, m.phraseExact ? 1 : 0);
  if (m.didYouMean !== undefined) text(8, m.didYouMean);
  const out = Buffer.from(buf.subarray(0, pos));
  if (buf.length > SCRATCH_KEPT) buf = Buffer.allocUnsafe(SCRATCH_BYTES);
  return out;
}

/** Strict UTF-8 (`fatal`): text the generic decoder would refuse is left to it. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the fields of one small message into `slots` (by field number): a varint below 2^28 or a byte
 * range, each field at most once and with the wire type `wireTypes` names. False for anything else.
 */
function readFields(bytes: Uint8Array, wireTypes: readonly (0 | 2 | undefined)[], slots: (number | Uint8Array | undefined)[]): boolean {
  slots.fill(undefined);
  let at = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (at >= bytes.length) return -1;
      const b = bytes[at++]!;
      v |= (b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    return -1;
  };
  while (at < bytes.length) {
    const tag = varint();
    if (tag < 0) return false;
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (wireTypes[field] !== wireType || slots[field] !== undefined) return false;
    const v = varint();
    if (v < 0) return false;
    if (wireType === 0) slots[field] = v;
    else {
      if (v > bytes.length - at) return false;
      slots[field] = bytes.subarray(at, at + v);
      at += v;
    }
  }
  return true;
}

/** The fields read last (the readers are synchronous, so one array serves them all). */
const slots: (number | Uint8Array | undefined)[] = [undefined, undefined, undefined, undefined];

function string(value: number | Uint8Array | undefined): string | undefined {
  if (value === undefined) return '';
  if (typeof value === 'number') return undefined;
  try {
    return utf8.decode(value);
  } catch {
    return undefined;
  }
}

const CALL_FIELDS = [undefined, 2, 2] as const;

/** A `Call` in its usual form, or undefined (see the header). */
export function decodeCall(bytes: Uint8Array): Call | undefined {
  if (!readFields(bytes, CALL_FIELDS, slots)) return undefined;
  const procedure = string(slots[1]);
  if (procedure === undefined) return undefined;
  return { $typeName: 'quarry.v1.Call', procedure, message: (slots[2] ?? new Uint8Array(0)) as Uint8Array };
}

const SEARCH_REQUEST_FIELDS = [undefined, 2, 0, 0] as const;

/** A `SearchRequest` in its usual form, or undefined (see the header). */
export function decodeSearchRequest(bytes: Uint8Array): SearchRequest | undefined {
  if (!readFields(bytes, SEARCH_REQUEST_FIELDS, slots)) return undefined;
  const q = string(slots[1]);
  if (q === undefined) return undefined;
  return { $typeName: 'quarry.v1.SearchRequest', q, scope: (slots[2] ?? 0) as Scope, page: (slots[3] ?? 0) as number };
}
