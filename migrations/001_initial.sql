-- ragd's schema in one design: documents and their versions, chunks with embeddings and a change
-- sequence for derived indexes, conversations, messages, the sources a conversation carries,
-- the citations behind every marker, and the mini knowledge graph.
-- {{.embedding_dim}} is filled in by migrations.Migrate from the configured embedding model.

CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;

CREATE TABLE documents (
    id          uuid PRIMARY KEY,
    source_key  text NOT NULL UNIQUE,
    format      text NOT NULL,
    title       text NOT NULL DEFAULT '',
    url         text,
    path        text,
    version     int  NOT NULL CHECK (version >= 1),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    deleted_at  timestamptz
);

CREATE TABLE document_versions (
    doc_id       uuid NOT NULL REFERENCES documents (id),
    version      int  NOT NULL CHECK (version >= 1),
    content_hash text NOT NULL,
    title        text NOT NULL DEFAULT '',
    published_at timestamptz,
    ingested_at  timestamptz NOT NULL DEFAULT now(),
    chunk_count  int  NOT NULL,
    bytes        int  NOT NULL,
    PRIMARY KEY (doc_id, version)
);

-- Every insert and every change of a chunk's searchability takes a new value, so a derived index
-- (bleve) catches up by reading rows with seq above the last one it applied.
CREATE SEQUENCE chunk_seq;

CREATE TABLE chunks (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    doc_id      uuid NOT NULL,
    version     int  NOT NULL,
    ordinal     int  NOT NULL,
    heading     text NOT NULL DEFAULT '',
    text        text NOT NULL,
    page_start  int,
    page_end    int,
    char_start  int  NOT NULL,
    char_end    int  NOT NULL,
    token_count int  NOT NULL,
    embedding   vector({{.embedding_dim}}),
    active      boolean NOT NULL DEFAULT true,
    seq         bigint  NOT NULL DEFAULT nextval('chunk_seq'),
    FOREIGN KEY (doc_id, version) REFERENCES document_versions (doc_id, version),
    UNIQUE (doc_id, version, ordinal),
    CHECK ((page_start IS NULL AND page_end IS NULL) OR (page_start >= 1 AND page_end >= page_start)),
    CHECK (char_start >= 0 AND char_end >= char_start)
);
CREATE INDEX chunks_seq_idx ON chunks (seq);

CREATE FUNCTION forbid_chunk_rewrite_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'chunk % cannot be deleted: citations may point at it', OLD.id
        USING ERRCODE = 'restrict_violation';
END $$;

-- Citations point at chunks, so what a chunk says never changes: only its searchability (active,
-- seq) and its embedding may. A new version of a document writes new chunks instead.
CREATE FUNCTION forbid_chunk_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.doc_id, NEW.version, NEW.ordinal, NEW.heading, NEW.text, NEW.page_start, NEW.page_end,
        NEW.char_start, NEW.char_end)
       IS DISTINCT FROM
       (OLD.doc_id, OLD.version, OLD.ordinal, OLD.heading, OLD.text, OLD.page_start, OLD.page_end,
        OLD.char_start, OLD.char_end) THEN
        RAISE EXCEPTION 'chunk % is immutable: ingest a new version instead', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER chunks_immutable BEFORE UPDATE ON chunks
    FOR EACH ROW EXECUTE FUNCTION forbid_chunk_rewrite();
CREATE TRIGGER chunks_not_deleted BEFORE DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION forbid_chunk_rewrite_delete();
CREATE INDEX chunks_doc_idx ON chunks (doc_id, version);
-- Only searchable chunks are in the HNSW graph; old versions stay in the table for citations.
CREATE INDEX chunks_embedding_idx ON chunks USING hnsw (embedding vector_cosine_ops) WHERE active;

CREATE TABLE conversations (
    id          uuid PRIMARY KEY,
    turn        int  NOT NULL DEFAULT 0,        -- user turns asked so far
    next_letter int  NOT NULL DEFAULT 0,        -- marker letters handed out (0 = A)
    goal_turn   int  NOT NULL DEFAULT 1,        -- turn where the current goal began
    ab_arm      text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Each turn writes a user message and an assistant message. The assistant message holds ragd's
-- answer (the fact sheet, or an LLM's answer over it) and, once the chat UI records it, the reply
-- the user actually saw; citations belong to the assistant message.
CREATE TABLE messages (
    id                uuid PRIMARY KEY,
    conversation_id   uuid NOT NULL REFERENCES conversations (id),
    turn              int  NOT NULL,
    role              text NOT NULL CHECK (role IN ('user', 'assistant')),
    content           text NOT NULL DEFAULT '',
    answer            text NOT NULL DEFAULT '',
    reply_recorded_at timestamptz,
    meta              jsonb NOT NULL DEFAULT '{}',  -- intent, mode, timings of the turn
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (conversation_id, turn, role)
);

-- The sources a conversation has found. A row outlives carry-over (carried = false) so a document
-- keeps its marker letter for the whole conversation.
CREATE TABLE conversation_sources (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    doc_id          uuid NOT NULL REFERENCES documents (id),
    marker          text NOT NULL,
    carry_score     real NOT NULL DEFAULT 0,
    pinned          boolean NOT NULL DEFAULT false,
    carried         boolean NOT NULL DEFAULT true,
    inactive_turns  int  NOT NULL DEFAULT 0,
    first_turn      int  NOT NULL,
    last_turn       int  NOT NULL,
    last_used_at    timestamptz NOT NULL DEFAULT now(),
    cited_chunk_ids bigint[] NOT NULL DEFAULT '{}',
    facts           jsonb NOT NULL DEFAULT '[]',
    reason          text NOT NULL DEFAULT '',
    PRIMARY KEY (conversation_id, doc_id),
    UNIQUE (conversation_id, marker)
);

-- One row per marker of an answer. Append-only: auditors must read exactly what was cited.
CREATE TABLE message_citations (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id      uuid   NOT NULL REFERENCES messages (id),
    conversation_id uuid   NOT NULL REFERENCES conversations (id),
    doc_id          uuid   NOT NULL REFERENCES documents (id),
    doc_version     int    NOT NULL,
    chunk_id        bigint NOT NULL REFERENCES chunks (id),
    marker          text   NOT NULL,
    fact_summary    text   NOT NULL,
    score           real   NOT NULL,
    origin          text   NOT NULL,   -- the lists that found the source: bm25,vector,carry,kg
    rank            int    NOT NULL,   -- the source's rank in the answer, from 1
    page_start      int,               -- pages of the cited passage, as shown (dedupe may join chunks)
    page_end        int,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (message_id, marker)
);
CREATE INDEX message_citations_conversation_idx ON message_citations (conversation_id, created_at);
CREATE INDEX message_citations_doc_idx ON message_citations (doc_id, created_at);

CREATE FUNCTION forbid_citation_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'message_citations is append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER message_citations_append_only
    BEFORE UPDATE OR DELETE ON message_citations
    FOR EACH ROW EXECUTE FUNCTION forbid_citation_change();

-- Mini knowledge graph: entities found in chunks at ingest, and their co-occurrence edges. It is
-- derived data, rebuilt from the chunks when needed, so its tables skip foreign keys (which cost
-- three times the insert time at ingest) and count with integers.
CREATE TABLE entities (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (length(name) <= 256),  -- normalized surface form
    kind text NOT NULL                                       -- the first kind seen wins
);
CREATE TABLE chunk_entities (
    chunk_id  bigint NOT NULL,
    entity_id bigint NOT NULL,
    PRIMARY KEY (entity_id, chunk_id)
);
CREATE INDEX chunk_entities_chunk_idx ON chunk_entities (chunk_id);
CREATE TABLE edges (
    src    bigint NOT NULL,
    dst    bigint NOT NULL,
    weight double precision NOT NULL,  -- chunks the two entities share
    PRIMARY KEY (src, dst)
);
CREATE INDEX edges_src_weight_idx ON edges (src, weight DESC);
