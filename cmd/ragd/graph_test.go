package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

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
