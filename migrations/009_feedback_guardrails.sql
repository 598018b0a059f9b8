-- Users' ratings of answers, the guardrails' persisted state and the experiment's assignment
-- counters. Every row is a tenant's, scoped as in 007 (see the store package's documentation).

-- One rating per assistant message (rating it again replaces it: a user may change their mind),
-- with the mode and arm of the turn it rates copied in, so reports need not read message meta.
-- sources holds per-source flags: [{"source": "A", "flag": "irrelevant"}, ...].
CREATE TABLE message_feedback (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL DEFAULT ragd_tenant() REFERENCES tenants (id),
    message_id      uuid NOT NULL UNIQUE REFERENCES messages (id),
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    rating          text NOT NULL CHECK (rating IN ('up', 'down')),
    reason          text NOT NULL DEFAULT '',
    sources         jsonb NOT NULL DEFAULT '[]',
    mode            text NOT NULL DEFAULT '',
    arm             text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX message_feedback_tenant_updated_idx ON message_feedback (tenant_id, updated_at);
CREATE INDEX message_feedback_conversation_idx ON message_feedback (conversation_id);

-- The mode distribution a tenant's drift is measured against, observed over a reference period
-- or set by its admin; a restart keeps it. (A baseline for every tenant is a flag, not a row.)
CREATE TABLE mode_baselines (
    tenant_id  uuid PRIMARY KEY DEFAULT ragd_tenant() REFERENCES tenants (id),
    baseline   jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- How many new conversations each tenant has had per experiment design: the slot a new
-- conversation takes decides its arm (blocked randomisation).
CREATE TABLE experiment_slots (
    tenant_id  uuid NOT NULL DEFAULT ragd_tenant() REFERENCES tenants (id),
    design     text NOT NULL,
    next_slot  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, design)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['message_feedback', 'mode_baselines', 'experiment_slots']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (ragd_sees(tenant_id)) WITH CHECK (ragd_sees(tenant_id))', t);
    END LOOP;
END $$;
-- Slots only count up; ratings and baselines are replaced, never deleted by ragd.
REVOKE DELETE ON message_feedback, mode_baselines, experiment_slots FROM ragd_app;
