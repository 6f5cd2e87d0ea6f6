-- The audit log: append-only record of security- and deployment-relevant actions (logins, invites,
-- capability mint/attenuate/revoke, control-plane operations). Never updated or deleted by the service.
CREATE TABLE audit_log (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  at        TEXT    NOT NULL,             -- ISO 8601 UTC
  actor     TEXT,                         -- capability id, or NULL for anonymous / local operator
  account   TEXT,                         -- account name when known
  address   TEXT,                         -- client address when the action came over the network
  action    TEXT    NOT NULL,             -- e.g. 'auth.login', 'cap.revoke', 'deploy'
  target    TEXT,                         -- managed target, account, or capability id acted upon
  from_ref  TEXT,
  to_ref    TEXT,
  reason    TEXT,
  result    TEXT    NOT NULL,             -- 'ok' | 'failed' | 'denied' | ...
  detail    TEXT                          -- JSON, never containing a capability or a secret
);
CREATE INDEX audit_log_action_at ON audit_log(action, at);
