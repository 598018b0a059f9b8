-- A conversation's rows name their conversation and its tenant in one foreign key. Each row of a
-- conversation (its messages, citations, sentence markers, sources, capsules, idempotency keys
-- and feedback) had two: one to its conversation and one to its tenant, which PostgreSQL checks
-- row by row, each with an index lookup and a row lock; a turn writes some fifty such rows. One
-- key to (conversation, tenant) checks both at the cost of one, and more than both did: a row
-- cannot name another tenant's conversation. The tenant itself is checked on the conversation.
ALTER TABLE conversations ADD CONSTRAINT conversations_id_tenant_key UNIQUE (id, tenant_id);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['messages', 'message_citations', 'conversation_markers', 'conversation_sources',
        'goal_capsules', 'idempotency_keys', 'message_feedback']
    LOOP
        EXECUTE format('ALTER TABLE %1$I ADD CONSTRAINT %2$I FOREIGN KEY (conversation_id, tenant_id)
            REFERENCES conversations (id, tenant_id), DROP CONSTRAINT %3$I, DROP CONSTRAINT %4$I',
            t, t || '_conversation_tenant_fkey', t || '_conversation_id_fkey', t || '_tenant_id_fkey');
    END LOOP;
END $$;
