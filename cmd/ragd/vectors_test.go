package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// serve with an embedding model says when chunks of any tenant have no vector (ingested without
// a model: the vector search cannot find them), and says nothing once every chunk has one.
func TestServeWarnsOfChunksWithoutVectors(t *testing.T) {
	ctx := context.Background()
	st, url := appStore(t)
	var logs bytes.Buffer
	a := &app{cfg: &Config{}, logger: slog.New(slog.NewTextHandler(&logs, nil)), store: st}

	a.checkVectors(ctx)
	require.Empty(t, logs.String(), "an empty store misses nothing")

	// Another tenant's chunks, ingested without a model: row-level security hides them from a
	// context without a tenant, which must not hide them from the count.
	ingestCorpus(t, st, "beta")
	a.checkVectors(ctx)
	require.Contains(t, logs.String(), "some chunks have no vector")
	require.Contains(t, logs.String(), "ragd reindex --embeddings")
	require.Regexp(t, `without_vector=[1-9]`, logs.String())

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "UPDATE chunks SET embedding = array_fill(0.1, ARRAY[$1::int])::vector", dbtest.Dim)
	require.NoError(t, err)
	logs.Reset()
	a.checkVectors(ctx)
	require.Empty(t, logs.String(), "every chunk has a vector")
}

// ingest without a model warns, once done, when other chunks have vectors: a model serves the
// database, and its vector search cannot find what was just ingested. Without vectors anywhere
// (a BM25-only deployment) it says nothing more.
func TestIngestWithoutAModelWarnsBesideVectors(t *testing.T) {
	ctx := context.Background()
	st, url := appStore(t)
	var logs bytes.Buffer
	a := &app{cfg: &Config{}, logger: slog.New(slog.NewTextHandler(&logs, nil)), store: st}

	ingestCorpus(t, st, "alpha")
	a.warnMixedVectors(ctx)
	require.Empty(t, logs.String(), "no chunk has a vector: BM25 only, as configured")

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "UPDATE chunks SET embedding = array_fill(0.1, ARRAY[$1::int])::vector", dbtest.Dim)
	require.NoError(t, err)
	ingestCorpus(t, st, "beta") // another tenant's, without a model
	a.warnMixedVectors(ctx)
	require.Contains(t, logs.String(), "other chunks of this database have vectors")
	require.Contains(t, logs.String(), "ragd reindex --embeddings")
	require.Regexp(t, `without_vector=[1-9]`, logs.String())
}
