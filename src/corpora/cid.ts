/**
 * Content ids (CONTRACT §2 "Content ids"): a document's cid is a stable 63-bit hash of its canonical key,
 * so re-indexing the same source gives the same cids, and a collision is detected and resolved here,
 * never by overwriting another document.
 *
 * Canonical keys, one namespace for every corpus:
 *   - a web document: its canonical URL (`https://example.com/a/b?x=1`; see `canonicalUrl`);
 *   - a local file of an own source: `file:<source>/<path relative to the source root>` (`file:docs/cli.md`);
 *   - a JSONL record without `url`: `id:<collection>/<_id>`, the collection naming the file it came from,
 *     so the `_id` "1" of two BEIR collections gives two documents.
 *
 * cid = the first 8 bytes of SHA-256(key), big-endian, with the top bit cleared. When that cid already
 * belongs to another key, the next candidate hashes `key#1`, then `key#2`, … The assignments live in the
 * state database (`cid_keys`, migration 200), which both sees every earlier key and makes a resolution
 * stick: the key that came first keeps the plain hash, forever.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../store/db.js';
import { MAX_CID, type Cid } from '../kernel/cid.js';
import { BadRequestError, InternalError } from '../kernel/errors.js';


/** The largest cid: 2^63 − 1 (CONTRACT §1 `bad_cid`). */

/** A collision chain longer than this means the hash or the table is broken, not bad luck. */
export const MAX_COLLISION_ATTEMPTS = 64;

/** The cid candidate for `key` at collision attempt `attempt` (0 = the plain hash). */
export function hashKey(key: string, attempt = 0): Cid {
  const input = attempt === 0 ? key : `${key}#${attempt}`;
  const digest = createHash('sha256').update(input, 'utf8').digest();
  return digest.readBigUInt64BE(0) & MAX_CID;
}

/**
 * Query parameters that only track the visitor or the campaign that brought them (Google Analytics'
 * `utm_*`, ad click ids, mail campaign ids): the same page with or without them is one document.
 */
export const TRACKING_PARAMS: readonly (string | RegExp)[] = [
  /^utm_/i, 'gclid', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'yclid', 'twclid', 'igshid', 'mc_cid', 'mc_eid',
  '_hsenc', '_hsmi', 'mkt_tok', 'oly_anon_id', 'oly_enc_id', 'vero_id', '_ga', '_gl',
];

function isTrackingParam(name: string): boolean {
  return TRACKING_PARAMS.some((p) => (typeof p === 'string' ? p === name.toLowerCase() : p.test(name)));
}

/** The query without tracking parameters, the others kept in their order and spelling. */
function withoutTracking(search: string): string {
  const kept = search.slice(1).split('&').filter((pair) => {
    if (pair === '') return false;
    const eq = pair.indexOf('=');
    let name = eq < 0 ? pair : pair.slice(0, eq);
    try { name = decodeURIComponent(name.replace(/\+/g, ' ')); } catch { /* kept as written */ }
    return !isTrackingParam(name);
  });
  return kept.length === 0 ? '' : `?${kept.join('&')}`;
}

const UNRESERVED = /%(2[DdEe]|3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|7[Ee])/g;

/**
 * The canonical form of an absolute http(s) URL: scheme and host lower-cased (IDN to punycode), the
 * default port and the fragment dropped, a trailing dot of the host dropped, the path normalized (dot
 * segments resolved, an empty path becomes `/`), percent-escapes of unreserved characters decoded and the
 * others upper-cased, tracking parameters (`TRACKING_PARAMS`) and empty `&&` pairs removed. The rest of the
 * query is kept as written: its order can matter to the server.
 * Throws BadRequestError (param `url`) for anything that is not an absolute http or https URL.
 */
export function canonicalUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new BadRequestError(`${JSON.stringify(raw.slice(0, 200))} is not an absolute URL.`, 'url');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new BadRequestError(`URL ${JSON.stringify(raw.slice(0, 200))} is not http or https.`, 'url');
  }
  if (u.hostname === '') throw new BadRequestError(`URL ${JSON.stringify(raw.slice(0, 200))} has no host.`, 'url');
  u.hash = '';
  u.username = '';
  u.password = '';
  if (u.hostname.endsWith('.')) u.hostname = u.hostname.replace(/\.+$/, '');
  const fixEscapes = (s: string) =>
    s.replace(UNRESERVED, (m) => String.fromCharCode(parseInt(m.slice(1), 16)))
      .replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase());
  u.pathname = fixEscapes(u.pathname);
  if (u.search !== '') u.search = withoutTracking(fixEscapes(u.search));
  // `new URL` already lower-cased scheme and host, dropped the default port and dot segments.
  return u.href;
}

/** The host a document is filed under for `site:` (lower case, no port), from its canonical URL. */
export function hostOf(canonical: string): string {
  return new URL(canonical).hostname;
}

/** Key of a local file of an own source; `relPath` uses `/` whatever the platform. */
export function fileKey(source: string, relPath: string): string {
  return `file:${source}/${relPath.split('\\').join('/')}`;
}

/** Key of a JSONL record identified only by `_id` within `collection`. */
export function idKey(collection: string, id: string): string {
  return `id:${collection}/${id}`;
}

export interface CidRegistryOptions {
  /** The hash used for candidates; tests pass a narrow one to force collisions. Default `hashKey`. */
  hash?: (key: string, attempt: number) => Cid;
}

/**
 * Assigns cids to keys against the `cid_keys` table. Safe against other processes assigning at the same
 * time (a CLI import while the server ingests): every write is `INSERT OR IGNORE` followed by a read of
 * what the table now says, so two racers agree on the winner.
 */
export class CidRegistry {
  readonly #db: Db;
  readonly #hash: (key: string, attempt: number) => Cid;
  readonly #byKey;
  readonly #byCid;
  readonly #insert;

  constructor(db: Db, options: CidRegistryOptions = {}) {
    this.#db = db;
    this.#hash = options.hash ?? hashKey;
    this.#byKey = db.prepare('SELECT cid FROM cid_keys WHERE key = ?').safeIntegers(true);
    this.#byCid = db.prepare('SELECT key FROM cid_keys WHERE cid = ?');
    this.#insert = db.prepare('INSERT OR IGNORE INTO cid_keys (cid, key) VALUES (?, ?)');
  }

  /** The cid of `key`, assigning (and recording) one when the key is new. */
  assign(key: string): Cid {
    const known = this.#byKey.get(key) as { cid: bigint } | undefined;
    if (known) return known.cid;
    for (let attempt = 0; attempt < MAX_COLLISION_ATTEMPTS; attempt++) {
      const cid = this.#hash(key, attempt) & MAX_CID;
      const r = this.#insert.run(cid, key);
      if (r.changes === 1) return cid;
      // Ignored: either the cid belongs to another key (a collision: try the next candidate), or another
      // process has just recorded this very key (take its answer).
      const raced = this.#byKey.get(key) as { cid: bigint } | undefined;
      if (raced) return raced.cid;
    }
    throw new InternalError(`No free cid for key ${JSON.stringify(key)} after ${MAX_COLLISION_ATTEMPTS} attempts.`);
  }

  /** Assigns many keys in one transaction (one fsync instead of one per key). */
  assignMany(keys: readonly string[]): Cid[] {
    return this.#db.transaction(() => keys.map((k) => this.assign(k))).immediate();
  }

  /** The cid recorded for `key`, without assigning one. */
  lookup(key: string): Cid | undefined {
    return (this.#byKey.get(key) as { cid: bigint } | undefined)?.cid;
  }

  /**
   * Every (cid, key) whose key is a URL of `host` (any scheme and port): the documents `site:host`
   * can match, in whichever corpus they are.
   */
  urlKeysOfHost(host: string): { cid: Cid; key: string }[] {
    const h = host.replace(/[\\%_]/g, (c) => `\\${c}`);
    const patterns = ['http', 'https'].flatMap((s) => [`${s}://${h}/%`, `${s}://${h}:%`]);
    return this.#db.prepare(`SELECT cid, key FROM cid_keys WHERE ${patterns.map(() => `key LIKE ? ESCAPE '\\'`).join(' OR ')}`)
      .safeIntegers(true).all(...patterns) as { cid: Cid; key: string }[];
  }

  /** The key a cid was assigned to, if any. */
  keyOf(cid: Cid): string | undefined {
    return (this.#byCid.get(cid) as { key: string } | undefined)?.key;
  }
}
