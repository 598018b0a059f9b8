package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// A search through a pool returns k of the caller's chunks when another tenant's are nearer and
// outnumber ef_search: the pool's connections start with the iterative scan, so the index goes
// on past the chunks row-level security drops. The plan must be the HNSW index's (a scan of the
// caller's rows sorted by distance would pass without it): the owner analyzes the table, so the
// planner knows the caller has most of the chunks.
func TestSearchVectorPoolSkipsOtherTenants(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := dbtest.NewDatabase(t)
	const ef, k = 5, 5
	s, err := store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true, EfSearch: ef})
	require.NoError(t, err)
	defer s.Close()
	beta, err := s.EnsureTenant(ctx, "beta")
	require.NoError(t, err)
	betaCtx := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: beta})

	var ours []ragd.NewVersion
	for i := range 400 {
		v := version(fmt.Sprintf("ours-%d", i), "h", fmt.Sprintf("ours %d", i))
		v.Chunks[0].Embedding = unit(1+i%50, 0, 0.3) // far from axis 0
		ours = append(ours, v)
	}
	_, err = s.SaveVersions(ctx, ours)
	require.NoError(t, err)
	var theirs []ragd.NewVersion
	for i := range 3 * ef {
		v := version(fmt.Sprintf("theirs-%d", i), "h", fmt.Sprintf("theirs %d", i))
		v.Chunks[0].Embedding = unit(0, 1+i, 0.01*float64(i+1)) // nearest to axis 0, in order
		theirs = append(theirs, v)
	}
	_, err = s.SaveVersions(betaCtx, theirs)
	require.NoError(t, err)

	owner, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer owner.Close(ctx)
	_, err = owner.Exec(ctx, "ANALYZE chunks")
	require.NoError(t, err)

	q := unit(0, 1, 0)
	hits, err := s.SearchVector(ctx, q, k, nil)
	require.NoError(t, err)
	require.Len(t, hits, k, "k of the caller's chunks, though the %d nearest are another tenant's", 3*ef)
	for _, text := range chunkTexts(t, ctx, s, hits) {
		require.Contains(t, text, "ours")
	}
	hits, err = s.SearchVector(betaCtx, q, k, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"theirs 0", "theirs 1", "theirs 2", "theirs 3", "theirs 4"}, chunkTexts(t, betaCtx, s, hits))

	// The same search, explained on a connection like the pool's.
	conn := dbtest.AppConn(t, url, ragd.DefaultTenant.String())
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "SET hnsw.ef_search = 5")
	require.NoError(t, err)
	rows, err := conn.Query(ctx, `EXPLAIN SELECT id FROM chunks WHERE active AND embedding IS NOT NULL AND tenant_id = $1
		ORDER BY embedding <=> $2::vector LIMIT 5`, ragd.DefaultTenant, pgvector.NewVector(q))
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "Index Scan using chunks_embedding_idx", "the caller's search uses the HNSW index")
}
