/**
 * Content ids (CONTRACT §2): a cid is a 63-bit unsigned integer, carried as a decimal string on every
 * face. `parseCid` is the one validation every face uses, so `bad_cid` means the same thing everywhere.
 */
import { BadCidError } from './errors.js';

export type Cid = bigint;

/** Largest cid: 2^63 − 1. */
export const MAX_CID: Cid = (1n << 63n) - 1n;

const CID_DIGITS = /^(?:0|[1-9][0-9]{0,18})$/;

/** The wire form of a cid: 1–19 ASCII digits, no leading zero (except "0"). */
export const CID_PATTERN = '^(0|[1-9][0-9]{0,18})$';

/** BadCidError unless `s` is 1–19 ASCII digits, without a leading zero (except "0"), at most 2^63 − 1. */
export function parseCid(s: unknown, param = 'cid'): Cid {
  if (typeof s !== 'string') throw new BadCidError(`cid must be a decimal string, not ${s === null ? 'null' : typeof s}.`, param);
  if (!CID_DIGITS.test(s)) {
    const shown = s.length > 40 ? `${JSON.stringify(s.slice(0, 40))}…` : JSON.stringify(s);
    throw new BadCidError(`cid ${shown} is not 1–19 decimal digits without a leading zero.`, param);
  }
  const c = BigInt(s);
  if (c > MAX_CID) throw new BadCidError(`cid ${s} exceeds 2^63−1.`, param);
  return c;
}

/** A cid given as a bigint (in range) or in its wire form. */
export function toCid(v: unknown, param = 'cid'): Cid {
  if (typeof v === 'bigint') {
    if (v < 0n || v > MAX_CID) throw new BadCidError(`cid ${v} is outside 0 … 2^63−1.`, param);
    return v;
  }
  return parseCid(v, param);
}
