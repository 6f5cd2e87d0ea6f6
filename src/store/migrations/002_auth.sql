-- Accounts, invites and capabilities (src/auth). The server keeps only what it needs to check a login
-- and a capability: OPAQUE registration records (never a password or a password hash), the SHA-256 of
-- invite codes (so a copy of the database cannot redeem a pending invite), and for each minted
-- capability its id, lineage and grant plus the SHA-256 of its signature (so a copy of the database
-- cannot rebuild a capability).
CREATE TABLE accounts (
  name        TEXT PRIMARY KEY,            -- lower-case user name, also the OPAQUE credential identifier
  record      TEXT NOT NULL,               -- OPAQUE registration record, base64url
  rights      TEXT NOT NULL,               -- JSON array of rights granted to this account's logins
  targets     TEXT,                        -- JSON array scoping its mgmt.* rights; NULL = every target
  created_at  TEXT NOT NULL,
  created_by  TEXT,                        -- 'local' (command line) or the invite id
  disabled_at TEXT                         -- set by `quarry user disable`; logins and capabilities stop
);

CREATE TABLE invites (
  id          TEXT PRIMARY KEY,
  code_hash   TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the invite code
  rights      TEXT NOT NULL,
  targets     TEXT,
  created_at  TEXT NOT NULL,
  created_by  TEXT,                        -- capability id of the admin, or 'local'
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  used_by     TEXT
);

CREATE TABLE capabilities (
  id          TEXT PRIMARY KEY,
  parent_id   TEXT REFERENCES capabilities(id),
  root_id     TEXT NOT NULL,
  account     TEXT,                        -- account the root was issued to; NULL for operator-minted
  rights      TEXT NOT NULL,               -- JSON array: the effective rights when minted
  targets     TEXT,                        -- JSON object right -> [targets]; NULL = unscoped
  expires_at  TEXT,                        -- NULL = no expiry caveat
  sig_hash    TEXT NOT NULL,               -- hex SHA-256 of the macaroon signature
  created_at  TEXT NOT NULL,
  kind        TEXT NOT NULL,               -- 'login' | 'mint' | 'attenuate'
  revoked_at  TEXT
);
CREATE INDEX capabilities_parent ON capabilities(parent_id);
CREATE INDEX capabilities_root ON capabilities(root_id);
