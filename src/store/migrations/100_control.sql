-- Control plane state (src/control). Desired state (spec) lives in control_targets; observed state is never
-- stored here as truth: verdicts are computed from the files on disk and the process table. Operations and
-- idempotency answers are kept so `GET /api/ops/{id}` and `Idempotency-Key` replays survive restarts.
CREATE TABLE control_targets (
  target          TEXT PRIMARY KEY,
  desired_version TEXT,                 -- the version that should be live; NULL until the first promotion
  generation      INTEGER NOT NULL DEFAULT 0, -- +1 on every change of desired_version (deploy, rollback, auto-rollback)
  lock_op         TEXT,                 -- op_id holding the per-target lock; cleared on recovery
  locked_at       TEXT,
  updated_at      TEXT NOT NULL
);

CREATE TABLE control_versions (
  target     TEXT NOT NULL,
  version    TEXT NOT NULL,
  digest     TEXT NOT NULL,             -- sha256:<hex> of the artifact tarball
  state      TEXT NOT NULL,             -- building|built|build_failed|staged|stage_failed|promoting|verifying|live|failed|superseded|pruned
  origin     TEXT NOT NULL,             -- 'build' | 'upload'
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (target, version)
);
CREATE INDEX control_versions_target_updated ON control_versions(target, updated_at);

CREATE TABLE control_ops (
  op_id        TEXT PRIMARY KEY,
  target       TEXT,                    -- NULL for a reconcile of every target
  kind         TEXT NOT NULL,           -- build|stage|deploy|rollback|reconcile|restart
  state        TEXT NOT NULL,           -- queued|running|succeeded|failed|cancelled
  version      TEXT,
  digest       TEXT,
  from_version TEXT,                    -- desired version before this op (restored when it is interrupted)
  error        TEXT,                    -- JSON {code, message} when failed
  log          TEXT NOT NULL DEFAULT '',
  actor        TEXT,
  reason       TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX control_ops_state ON control_ops(state);

CREATE TABLE control_idempotency (
  actor      TEXT NOT NULL,             -- capability id or '' for anonymous/local
  key        TEXT NOT NULL,
  route      TEXT NOT NULL,             -- 'POST /api/deploy': a key reused on another route is a new request
  status     INTEGER NOT NULL,
  answer     TEXT NOT NULL,             -- JSON of the first answer
  created_at TEXT NOT NULL,
  PRIMARY KEY (actor, key, route)
);
