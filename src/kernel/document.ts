/**
 * A document as Quarry stores and serves it, from ingest through the index to every face's resource:
 * a content id, a title, the text, and the URL and host when it has them.
 */
import type { Cid } from './cid.js';

export interface DocumentRecord {
  cid: Cid;
  title: string;
  text: string;
  /** Canonical absolute URL, when the document has one. */
  url?: string;
  /** The URL's host (what `site:` matches), when the document has a URL. */
  host?: string;
}
