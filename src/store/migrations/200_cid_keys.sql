-- Content-id assignments (CONTRACT §2 "Content ids"): every canonical key (canonical URL, `file:` path or
-- `id:` collection/_id) ingested into any corpus, with the cid it was given. One table for all corpora, so
-- a URL has the same cid in `web` and `trusted`. A cid belongs to exactly one key (primary key) and a key
-- to exactly one cid (unique): a hash collision is resolved at ingest by rehashing `key#n`, and the row
-- written here is what keeps the resolution stable across re-imports. Rows are never deleted: a deleted
-- document's cid stays reserved for its key. cid is a 63-bit value, so it fits SQLite's signed INTEGER.
CREATE TABLE cid_keys (
  cid INTEGER PRIMARY KEY,
  key TEXT    NOT NULL UNIQUE
);
