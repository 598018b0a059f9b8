-- The chat API a UI needs: conversations get a title the user can set and a deletion mark that
-- hides them from chat (their messages and citations stay for auditors), and both lists are
-- read newest first by keyset, so they have indexes in that order.

ALTER TABLE conversations ADD COLUMN title text NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN deleted_at timestamptz;
CREATE INDEX conversations_recent_idx ON conversations (updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX documents_recent_idx ON documents (updated_at DESC, id DESC) WHERE deleted_at IS NULL;
