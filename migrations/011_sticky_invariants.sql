-- The sticky invariants of a conversation's user messages through its last turn (package
-- invariant), written in the transaction of every turn: a turn then reads only its latest
-- messages (--history-window) and still carries every invariant, however old. NULL: a
-- conversation from before this migration; its next turn reads all its messages once.
ALTER TABLE conversations ADD COLUMN invariants jsonb;
