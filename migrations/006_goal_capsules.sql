-- One capsule per finished goal of a conversation: the summary that context bundles show instead
-- of the goal's messages (turns first_turn..last_turn). Written in the transaction of the turn
-- that finished the goal; method says whether it is extractive or an LLM's.
CREATE TABLE goal_capsules (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    first_turn      int  NOT NULL CHECK (first_turn >= 1),
    last_turn       int  NOT NULL CHECK (last_turn >= first_turn),
    text            text NOT NULL,
    method          text NOT NULL CHECK (method IN ('extractive', 'llm')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, first_turn)
);
