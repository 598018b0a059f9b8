-- Tenants, API keys, and row-level security.
--
-- Every row belongs to a tenant. The store sets the tenant of each connection it hands out
-- (set_config('ragd.tenant', ...), from the request's context) and filters its queries by it;
-- PostgreSQL enforces the same with row-level security, as a second wall, for the role ragd works
-- as: ragd_app, which owns nothing, so it cannot bypass the policies, TRUNCATE, or disable the
-- append-only triggers. Inserts take the connection's tenant by default, so no write can forget it.
--
-- 'all' is the one setting that sees every tenant: the BM25 index catching up from the chunk
-- change feed, and maintenance commands. Requests never set it.

CREATE TABLE tenants (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The default tenant: every row written before tenants existed, and the single-user case.
INSERT INTO tenants (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'default');

-- ragd_tenant is the connection's tenant, or the default tenant when none is set (or 'all').
CREATE FUNCTION ragd_tenant() RETURNS uuid LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN coalesce(current_setting('ragd.tenant', true), '') IN ('', 'all')
                THEN '00000000-0000-0000-0000-000000000001'::uuid
                ELSE current_setting('ragd.tenant', true)::uuid END
$$;
-- ragd_sees says whether the connection may see a row of tenant t.
CREATE FUNCTION ragd_sees(t uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT current_setting('ragd.tenant', true) = 'all' OR t = ragd_tenant()
$$;

CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL DEFAULT ragd_tenant() REFERENCES tenants (id),
    name       text NOT NULL DEFAULT '',
    role       text NOT NULL CHECK (role IN ('chat', 'auditor', 'admin')),
    prefix     text NOT NULL,            -- the first characters of the secret, to recognise it
    hash       bytea NOT NULL UNIQUE,    -- sha256 of the secret; the secret itself is never stored
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['documents', 'document_versions', 'chunks', 'conversations', 'messages',
        'conversation_sources', 'message_citations', 'entities', 'chunk_entities', 'edges',
        'idempotency_keys', 'conversation_markers', 'goal_capsules']
    LOOP
        EXECUTE format('ALTER TABLE %I ADD COLUMN tenant_id uuid NOT NULL DEFAULT ragd_tenant() REFERENCES tenants (id)', t);
    END LOOP;
END $$;

-- Identities are per tenant: two tenants may ingest the same source key, name the same entity,
-- or use the same Idempotency-Key.
ALTER TABLE documents DROP CONSTRAINT documents_source_key_key;
ALTER TABLE documents ADD CONSTRAINT documents_tenant_source_key UNIQUE (tenant_id, source_key);
ALTER TABLE entities DROP CONSTRAINT entities_name_key;
ALTER TABLE entities ADD CONSTRAINT entities_tenant_name UNIQUE (tenant_id, name);
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (tenant_id, key);
CREATE INDEX conversations_tenant_recent_idx ON conversations (tenant_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX documents_tenant_recent_idx ON documents (tenant_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX message_citations_tenant_idx ON message_citations (tenant_id, id);
CREATE INDEX chunks_tenant_idx ON chunks (tenant_id) WHERE active;

-- The key that asked a turn is recorded on its messages: only that key (or an admin) records the
-- reply.
ALTER TABLE messages ADD COLUMN key_id uuid DEFAULT nullif(current_setting('ragd.key', true), '')::uuid;

-- The role ragd works as. Roles are shared by the cluster's databases, so creating it tolerates
-- a concurrent migration of another database having done it first.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ragd_app') THEN
        BEGIN
            CREATE ROLE ragd_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
    IF NOT pg_has_role(current_user, 'ragd_app', 'MEMBER') THEN
        EXECUTE format('GRANT ragd_app TO %I', current_user);
    END IF;
END $$;

DO $$
DECLARE t text;
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ragd_app', current_schema());
    FOREACH t IN ARRAY ARRAY['tenants', 'api_keys', 'documents', 'document_versions', 'chunks', 'conversations',
        'messages', 'conversation_sources', 'message_citations', 'entities', 'chunk_entities', 'edges',
        'idempotency_keys', 'conversation_markers', 'goal_capsules']
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ragd_app', t);
        IF t <> 'tenants' THEN
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
            EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (ragd_sees(tenant_id)) WITH CHECK (ragd_sees(tenant_id))', t);
        END IF;
    END LOOP;
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO ragd_app', current_schema());
    -- Tables and sequences later migrations create are granted the same; their RLS policy is
    -- theirs to add (see the store package's documentation).
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ragd_app', current_schema());
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO ragd_app', current_schema());
END $$;
-- Tenants are named by admins through `ragd keys create --tenant`; the app reads them and may add one.
REVOKE UPDATE, DELETE ON tenants FROM ragd_app;
-- Citations are append-only for ragd whatever the triggers say.
REVOKE UPDATE, DELETE ON message_citations FROM ragd_app;
