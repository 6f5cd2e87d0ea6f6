/**
 * The binary form of `quarry.v1.SearchResponse`, written directly: the one message every search over the
 * RPC answers with, so its encoding is on the hot path. The generic encoder of `@bufbuild/protobuf`
 * walks the descriptor for every field of every result and writes each string through its own call into
 * a growing buffer; this one builds the message as a byte string (one character per byte: tags and
 * varints as char codes, ASCII text as it is, other text as its UTF-8 bytes) and copies it out once.
 * Fields go in field-number order with proto3's rules: implicit fields at their zero value are left out,
 * `optional` ones are written when set. The output is the canonical encoding, byte for byte what
 * `toBinary(SearchResponseSchema, …)` writes; a test holds the two equal over generated messages, so a
 * change to search.proto that this file does not follow fails it.
 */
import type { Result, SearchResponse } from './gen/quarry/v1/search_pb.js';

const ASCII = /^[\x00-\x7f]*$/;
/** Up to 2^53 a 64-bit value is written with number arithmetic, many times cheaper than bigint's. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A tag byte: `field << 3 | wire type` (0 varint, 2 length-delimited); every field here is below 16. */
const tag = (field: number, wireType: 0 | 2) => String.fromCharCode((field << 3) | wireType);

function varint(n: number): string {
  let s = '';
  while (n >= 0x80) {
    s += String.fromCharCode((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  return s + String.fromCharCode(n);
}

/** A uint64, or an int64 as its two's complement (ten bytes when negative). */
function varint64(n: bigint): string {
  if (n < 0n) n = BigInt.asUintN(64, n);
  if (n <= MAX_SAFE) return varint(Number(n));
  let s = '';
  while (n >= 0x80n) {
    s += String.fromCharCode(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  return s + String.fromCharCode(Number(n));
}

/** A length-delimited field holding `bytes` (a byte string). */
const delimited = (field: number, bytes: string) => tag(field, 2) + varint(bytes.length) + bytes;

const text = (field: number, s: string) => delimited(field, ASCII.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1'));

function result(r: Result): string {
  let s = '';
  if (r.cid !== 0n) s += tag(1, 0) + varint64(r.cid);
  if (r.score !== 0n) s += tag(2, 0) + varint64(r.score);
  if (r.title !== '') s += text(3, r.title);
  if (r.snippet !== undefined) s += text(4, r.snippet);
  if (r.doc !== '') s += text(5, r.doc);
  if (r.url !== undefined) s += text(6, r.url);
  if (r.host !== undefined) s += text(7, r.host);
  return s;
}

/** `SearchResponse` in the protobuf binary format. */
export function encodeSearchResponse(m: SearchResponse): Buffer {
  let s = '';
  if (m.query !== '') s += text(1, m.query);
  if (m.scope !== 0) s += tag(2, 0) + varint(m.scope);
  if (m.page !== 0) s += tag(3, 0) + varint(m.page);
  if (m.total !== 0n) s += tag(4, 0) + varint64(m.total);
  if (m.nresults !== 0) s += tag(5, 0) + varint(m.nresults);
  for (const r of m.results) s += delimited(6, result(r));
  if (m.phraseExact !== undefined) s += tag(7, 0) + varint(m.phraseExact ? 1 : 0);
  if (m.didYouMean !== undefined) s += text(8, m.didYouMean);
  return Buffer.from(s, 'latin1');
}
