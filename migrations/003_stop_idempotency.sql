-- A turn whose answer stream was stopped (by the client leaving or by POST /v1/messages/{id}/stop)
-- keeps as its answer what was sent, and says when it stopped.
ALTER TABLE messages ADD COLUMN stopped_at timestamptz;

-- Idempotency-Key on /v1/ask: the key is recorded in the turn's own transaction, so a turn and its
-- key exist together or not at all; the response is added once it is complete, and a retry with
-- the key gets it back. request_hash tells a retry from a different request reusing the key.
CREATE TABLE idempotency_keys (
    key             text PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
    request_hash    bytea NOT NULL,
    conversation_id uuid  NOT NULL REFERENCES conversations (id),
    message_id      uuid  NOT NULL REFERENCES messages (id),
    response        jsonb,
    created_at      timestamptz NOT NULL DEFAULT now()
);
