-- What each conversation is about (package focus): entities and subjects with their decayed
-- weights, written in the transaction of every turn.
ALTER TABLE conversations ADD COLUMN focus jsonb NOT NULL DEFAULT '{}';
