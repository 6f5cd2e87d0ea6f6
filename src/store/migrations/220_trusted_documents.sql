-- The trusted corpus's flags (CONTRACT §3): one row per flagged document, who flagged it and when. `cid`
-- is the document's cid (its key's, as in cid_keys); `state` is `pending` until the crawler has fetched
-- the URL, then `fetched` (the document is in the trusted index) or `failed` (with `error`).
CREATE TABLE trusted_flags (
  cid        INTEGER PRIMARY KEY,
  url        TEXT,                       -- the canonical URL, when the document has one
  title      TEXT,
  note       TEXT,
  cap_id     TEXT,                       -- capability id of the flagger ('local' for the operator)
  account    TEXT,                       -- the account the capability was issued to, when known
  flagged_at TEXT NOT NULL,
  state      TEXT NOT NULL CHECK (state IN ('pending', 'fetched', 'failed')),
  error      TEXT
);
CREATE INDEX trusted_flags_by_time ON trusted_flags (flagged_at DESC, cid);
CREATE INDEX trusted_flags_pending ON trusted_flags (url) WHERE state = 'pending';

-- `Idempotency-Key` answers of the documents API: the first answer of (caller, key, route) is replayed.
CREATE TABLE documents_idempotency (
  actor      TEXT NOT NULL,             -- capability id, 'local', or '' for anonymous
  key        TEXT NOT NULL,
  route      TEXT NOT NULL,
  status     INTEGER NOT NULL,
  answer     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (actor, key, route)
);
