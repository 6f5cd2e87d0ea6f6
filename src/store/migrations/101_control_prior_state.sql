-- The state a version had before a promotion moved it to `promoting`, so that crash recovery can put
-- back a version whose promotion was interrupted (it was never judged bad) instead of marking it failed.
ALTER TABLE control_ops ADD COLUMN prior_state TEXT;
