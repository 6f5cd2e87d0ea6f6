-- The console's per-target history reads a target's newest audit entries (GET /api/history).
CREATE INDEX audit_log_target_id ON audit_log(target, id);
