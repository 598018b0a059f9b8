package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
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
	betaCtx := asNewTenant(t, s, "beta")

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

	asOwner(t, url, "ANALYZE chunks")

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

// A tenant's search returns its k nearest chunks when pgvector's iterative scan gives up first,
// as it does for a small tenant among a large one's chunks. The other tenant's chunks are all
// nearer the question than any of ours, and the scan stops when its memory passes
// hnsw.scan_mem_multiplier x work_mem (work_mem lowered for the pool's sessions, as an operator
// could, to keep the tables small: at the defaults it stops after 20,000 tuples visited,
// hnsw.max_scan_tuples). Ours are most of the table, so the planner searches the HNSW index
// (checked below) rather than sorting ours, and the scan alone returns fewer than k of ours
// (none, in practice). A search within most of our documents is checked too.
func TestSearchVectorWhenTheIterativeScanStopsShort(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := dbtest.NewDatabase(t)
	const k, ours, theirs = 10, 1000, 200
	app, err := neturl.Parse(dbtest.AppURL(t, url))
	require.NoError(t, err)
	query := app.Query()
	query.Set("options", "-c work_mem=64kB")
	app.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20") // pgx reads a + as itself
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := store.Open(ctx, store.Config{URL: app.String(), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true, EfSearch: k, Logger: logger})
	require.NoError(t, err)
	defer s.Close()
	betaCtx := asNewTenant(t, s, "beta")

	// Ours lean further from axis 0 the lower their number: the nearest are the last ones.
	var vs []ragd.NewVersion
	for i := range ours {
		v := version(fmt.Sprintf("ours-%d", i), "h", fmt.Sprintf("ours %d", i))
		v.Chunks[0].Embedding = unit(1+i%(dbtest.Dim-1), 0, 0.3+0.001*float64(i))
		vs = append(vs, v)
	}
	saved, err := s.SaveVersions(ctx, vs)
	require.NoError(t, err)
	vs = nil
	for i := range theirs {
		v := version(fmt.Sprintf("theirs-%d", i), "h", fmt.Sprintf("theirs %d", i))
		v.Chunks[0].Embedding = unit(0, 1+i%(dbtest.Dim-1), 0.001*float64(i+1))
		vs = append(vs, v)
	}
	_, err = s.SaveVersions(betaCtx, vs)
	require.NoError(t, err)
	asOwner(t, url, "ANALYZE chunks")

	q := unit(0, 1, 0)

	// The plan the pool's sessions get is the HNSW index's, and it stops short.
	conn := dbtest.AppConn(t, url, ragd.DefaultTenant.String())
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, fmt.Sprintf("SET hnsw.ef_search = %d; SET hnsw.iterative_scan = strict_order; SET work_mem = '64kB'", k))
	require.NoError(t, err)
	search := `SELECT id FROM chunks WHERE active AND embedding IS NOT NULL AND tenant_id = $1 ORDER BY embedding <=> $2::vector LIMIT $3`
	rows, err := conn.Query(ctx, "EXPLAIN "+search, ragd.DefaultTenant, pgvector.NewVector(q), k)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "Index Scan using chunks_embedding_idx", "our search uses the HNSW index")
	// The graph's layers are drawn at random as rows go in, so once in a while the scan finds k
	// of ours before its memory runs out; the index is then built again (new draws), so that the
	// searches below meet the short scan they are about.
	found := func() int {
		rows, err := conn.Query(ctx, search, ragd.DefaultTenant, pgvector.NewVector(q), k)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		return len(ids)
	}
	n := found()
	for try := 0; n >= k && try < 5; try++ {
		asOwner(t, url, "REINDEX INDEX chunks_embedding_idx")
		n = found()
	}
	require.Less(t, n, k, "the HNSW scan alone stops short of k")

	var want []string
	for i := ours - 1; i >= ours-k; i-- {
		want = append(want, fmt.Sprintf("ours %d", i))
	}
	// More than five times: pgx prepares the statement, and PostgreSQL may then plan it once for
	// every tenant.
	for range 7 {
		hits, err := s.SearchVector(ctx, q, k, nil)
		require.NoError(t, err)
		require.Equal(t, want, chunkTexts(t, ctx, s, hits))
	}
	require.NotContains(t, logs.String(), "fewer than k")

	// The same within most of our documents: their chunks are sorted by distance, not searched
	// for through the index.
	var docs []uuid.UUID
	for _, r := range saved[ours/4:] {
		docs = append(docs, r.DocID)
	}
	for range 7 {
		hits, err := s.SearchVector(ctx, q, k, docs)
		require.NoError(t, err)
		require.Equal(t, want, chunkTexts(t, ctx, s, hits))
	}

	// When the filter matches more than hnsw.max_scan_tuples chunks they are not sorted: the
	// search returns what the HNSW scan found, and says so.
	query.Set("options", "-c work_mem=64kB -c hnsw.max_scan_tuples=100")
	app.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20")
	capped, err := store.Open(ctx, store.Config{URL: app.String(), EmbeddingDim: dbtest.Dim, EfSearch: k, Logger: logger})
	require.NoError(t, err)
	defer capped.Close()
	hits, err := capped.SearchVector(ctx, q, k, nil)
	require.NoError(t, err)
	require.Less(t, len(hits), k)
	require.Contains(t, logs.String(), "vector search found fewer than k chunks")
}

// asOwner runs a statement as the tables' owner: ANALYZE chunks gathers the statistics, so that
// the planner's choice between the HNSW index and a sort is the one a loaded database gets;
// REINDEX builds the HNSW graph again.
func asOwner(t *testing.T, url, statement string) {
	t.Helper()
	owner, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer owner.Close(t.Context())
	_, err = owner.Exec(t.Context(), statement)
	require.NoError(t, err)
}

// A tenant's search is planned for that tenant every time. pgx runs a statement it has seen as
// a prepared statement, and after five executions PostgreSQL may plan it once for all tenants (a
// generic plan). With many tenants sharing the table, that plan expects each to have a few rows
// and sorts them by distance: for a big tenant it reads every chunk. Here we have most of the
// chunks (enough that the planner prefers the index for us: with 1,500 it sorts ours) and 100
// small tenants the rest, and the plan the store's search runs with (auto_explain reports it,
// as EXPLAIN (FORMAT JSON) would) must be the HNSW index scan every time. As a prepared
// statement it is that five times, then a sort of our chunks.
func TestSearchVectorIsPlannedForItsTenantEveryTime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := dbtest.NewDatabase(t)
	const k, ours, tenants = 10, 3000, 100
	s, err := store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true})
	require.NoError(t, err)
	defer s.Close()
	var vs []ragd.NewVersion
	for i := range ours {
		v := version(fmt.Sprintf("ours-%d", i), "h", fmt.Sprintf("ours %d", i))
		v.Chunks[0].Embedding = unit(i%dbtest.Dim, (i+1)%dbtest.Dim, 0.3)
		vs = append(vs, v)
	}
	_, err = s.SaveVersions(ctx, vs)
	require.NoError(t, err)
	for i := range tenants {
		v := version("theirs", "h", "theirs 0", "theirs 1")
		v.Chunks[0].Embedding = unit(i%dbtest.Dim, (i+2)%dbtest.Dim, 0.1)
		v.Chunks[1].Embedding = unit(i%dbtest.Dim, (i+3)%dbtest.Dim, 0.2)
		_, err = s.SaveVersions(asNewTenant(t, s, fmt.Sprintf("small-%d", i)), []ragd.NewVersion{v})
		require.NoError(t, err)
	}
	asOwner(t, url, "ANALYZE chunks")

	// A store on one connection that works as ragd_app, as the pool's do (its searches run the
	// same statement, in a transaction that sets ef_search); loading auto_explain takes the owner
	// (a superuser), before SET ROLE.
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, sql := range []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
		"SET auto_explain.log_format = json", "SET auto_explain.log_level = notice", "SET ROLE ragd_app",
		"SELECT set_config('ragd.tenant', '" + ragd.DefaultTenant.String() + "', false)"} {
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	require.NoError(t, pgxvec.RegisterTypes(ctx, conn))
	searcher := store.New(conn)
	for i := range 8 {
		notices = nil
		hits, err := searcher.SearchVector(ctx, unit(i, i+1, 0.3), k, nil)
		require.NoError(t, err)
		require.Len(t, hits, k)
		require.Equal(t, []string{"Limit", "Index Scan using chunks_embedding_idx"}, searchPlan(t, notices), "search %d", i+1)
	}
}

// searchPlan returns the nodes, outermost first, of the vector search's plan among auto_explain's
// notices (JSON format).
func searchPlan(t *testing.T, notices []string) []string {
	t.Helper()
	type node struct {
		NodeType  string `json:"Node Type"`
		IndexName string `json:"Index Name"`
		Plans     []node `json:"Plans"`
	}
	for _, n := range notices {
		var explained struct {
			QueryText string `json:"Query Text"`
			Plan      node   `json:"Plan"`
		}
		i := strings.Index(n, "{")
		require.GreaterOrEqual(t, i, 0, n)
		require.NoError(t, json.Unmarshal([]byte(n[i:]), &explained), n)
		if !strings.Contains(explained.QueryText, "ORDER BY embedding <=>") {
			continue
		}
		var out []string
		var walk func(node)
		walk = func(p node) {
			name := p.NodeType
			if p.IndexName != "" {
				name += " using " + p.IndexName
			}
			out = append(out, name)
			for _, c := range p.Plans {
				walk(c)
			}
		}
		walk(explained.Plan)
		return out
	}
	t.Fatalf("no vector search among the notices: %q", notices)
	return nil
}

// asNewTenant makes a tenant named name and returns a context that acts as it.
func asNewTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	id, err := s.EnsureTenant(t.Context(), name)
	require.NoError(t, err)
	return ragd.WithPrincipal(t.Context(), ragd.Principal{Tenant: id})
}
