-- Idempotency keys are remembered for a day (store.IdempotencyTTL): expired ones are pruned a few
-- at a time as new keys are recorded, oldest first.
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
