package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// serve --kg over a corpus ingested without the graph is refused, naming the way out;
// reindex --graph builds the graph, after which serve --kg starts; building again adds nothing.
func TestKGNeedsAGraph(t *testing.T) {
	ctx := context.Background()
	st := store.New(dbtest.TestTx(t))
	a := &app{cfg: &Config{KG: true}, logger: slog.New(slog.DiscardHandler), store: st}
	require.NoError(t, a.checkGraph(ctx), "an empty store has nothing to miss")

	in, err := ingest.New(ingest.Config{}, st, nil)
	require.NoError(t, err)
	_, err = in.Ingest(ctx, in.Walk(ctx, []string{"../../testdata/corpus"}), nil)
	require.NoError(t, err)
	require.ErrorContains(t, a.checkGraph(ctx), "--kg: none of the")
	require.ErrorContains(t, a.checkGraph(ctx), "ragd reindex --graph")

	active, _, err := st.GraphCoverage(ctx)
	require.NoError(t, err)
	n, err := backfillGraph(ctx, st, a.logger)
	require.NoError(t, err)
	require.Equal(t, int(active), n, "every chunk without entities is read")
	require.NoError(t, a.checkGraph(ctx))
	ids, err := st.EntityChunks(ctx, []string{"earthquake safety"}, 5)
	require.NoError(t, err)
	require.NotEmpty(t, ids, "the title's entity is found in the document's chunks")

	_, with, err := st.GraphCoverage(ctx)
	require.NoError(t, err)
	again, err := backfillGraph(ctx, st, a.logger)
	require.NoError(t, err)
	require.Equal(t, int(active-with), again, "only the chunks that name nothing are read again")
	_, with2, err := st.GraphCoverage(ctx)
	require.NoError(t, err)
	require.Equal(t, with, with2, "and nothing is added")
}

// serve --kg checks every tenant's chunks, not only the default tenant's (which is all that
// row-level security shows a context without a tenant).
func TestKGChecksEveryTenant(t *testing.T) {
	st, _ := appStore(t)
	a := &app{cfg: &Config{KG: true}, logger: slog.New(slog.DiscardHandler), store: st}
	ingestCorpus(t, st, "beta")
	require.ErrorContains(t, a.checkGraph(context.Background()), "--kg: none of the", "beta's chunks have no entities")
}

// appStore opens the store of a new database as `ragd serve` does, logged in as the application
// login (row-level security applies); it returns the store and the owner's URL.
func appStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	url := dbtest.NewDatabase(t)
	st, err := store.Open(context.Background(), store.Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st, url
}

// ingestCorpus ingests testdata/corpus, without models or the graph, into the tenant named
// (created if new; "" is the default tenant), and returns a context acting for that tenant.
func ingestCorpus(t *testing.T, st *store.Store, tenant string) context.Context {
	t.Helper()
	ctx := context.Background()
	if tenant != "" {
		id, err := st.EnsureTenant(ctx, tenant)
		require.NoError(t, err)
		ctx = ragd.WithPrincipal(ctx, ragd.Principal{Tenant: id})
	}
	in, err := ingest.New(ingest.Config{}, st, nil)
	require.NoError(t, err)
	_, err = in.Ingest(ctx, in.Walk(ctx, []string{"../../testdata/corpus"}), nil)
	require.NoError(t, err)
	return ctx
}

// reindex --graph works tenant by tenant: every tenant's chunks get entities of their own
// tenant, never the default tenant's, and each tenant's graph finds its own chunks only.
func TestGraphBackfillIsPerTenant(t *testing.T) {
	st, url := appStore(t)
	ctx := ingestCorpus(t, st, "")
	betaCtx := ingestCorpus(t, st, "beta")
	beta := ragd.PrincipalOf(betaCtx).Tenant

	n, err := backfillGraph(ragd.AllTenants(ctx), st, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Positive(t, n)

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var crossed, betaEntities int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM chunk_entities ce JOIN chunks c ON c.id = ce.chunk_id
		JOIN entities e ON e.id = ce.entity_id WHERE ce.tenant_id <> c.tenant_id OR e.tenant_id <> c.tenant_id`).Scan(&crossed))
	require.Zero(t, crossed, "no mention links a chunk to another tenant's entity")
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM entities WHERE tenant_id = $1", beta).Scan(&betaEntities))
	require.Positive(t, betaEntities, "beta's chunks name beta's entities")

	for _, c := range []context.Context{ctx, betaCtx} {
		ids, err := st.EntityChunks(c, []string{"earthquake safety"}, 5)
		require.NoError(t, err)
		require.NotEmpty(t, ids)
		var others int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM chunks WHERE id = ANY($1) AND tenant_id <> $2",
			ids, ragd.PrincipalOf(c).Tenant).Scan(&others))
		require.Zero(t, others, "a tenant's graph finds its own chunks")
	}
}
