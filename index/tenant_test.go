package index_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/index"
)

// tenantReads is everything a tenant reads from the index that BM25's statistics shape.
type tenantReads struct {
	Search, SearchIn, Title []ragd.Hit
	Keywords                []string
	Coverage                []float64
	DocFreqAll, DocFreqT    map[string]int
	Seq                     int64
}

func reads(t *testing.T, ctx context.Context, ix *index.Index) tenantReads {
	t.Helper()
	var r tenantReads
	var err error
	r.Search, err = ix.Search(ctx, "gas leak after the earthquake shaking", 10)
	require.NoError(t, err)
	require.NotEmpty(t, r.Search)
	ids := []int64{r.Search[0].ChunkID}
	if len(r.Search) > 1 {
		ids = append(ids, r.Search[len(r.Search)-1].ChunkID)
	}
	r.SearchIn, err = ix.SearchIn(ctx, "gas earthquake", 10, ids)
	require.NoError(t, err)
	r.Title, err = ix.SearchTitle(ctx, "gas shaking", "Earthquake safety", 10)
	require.NoError(t, err)
	require.NotEmpty(t, r.Title)
	r.Keywords, err = ix.Keywords(ctx, "smell gas leak near the boiler after an earthquake aftershock", "boiler", 4)
	require.NoError(t, err)
	require.NotEmpty(t, r.Keywords)
	r.Coverage, err = ix.Coverage(ctx, "gas leaks after earthquakes", []string{"Check for gas leaks after the shaking.", "Earthquakes strike.", "Boil water."})
	require.NoError(t, err)
	words := index.Terms("gas leak earthquake safety shaking boiler appliance")
	r.DocFreqAll, err = ix.DocFreq(ctx, "_all", words)
	require.NoError(t, err)
	r.DocFreqT, err = ix.DocFreq(ctx, "title", words)
	require.NoError(t, err)
	r.Seq = ix.TenantSeq(ctx)
	return r
}

// No cross-tenant side channel: what tenant A reads (scores to the last bit, order, keywords,
// coverage, document frequencies) is the same whether or not tenant B has ingested documents
// full of A's words. The same documents ingested by A do change what A reads, so the comparison
// can fail.
func TestTenantStatisticsAreTheTenantsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	ctxA := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: ragd.DefaultTenant})
	ctxB := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenantB})

	b.save(t, "quakes", "1", "Earthquake safety", "Drop, cover and hold on during earthquakes.", "Check for gas leaks after the shaking.",
		"Secure the boiler and gas appliances to the wall.")
	b.save(t, "gas", "1", "Gas appliances", "Have gas appliances checked every year.", "A leak smells of rotten eggs.")
	b.save(t, "floods", "1", "Flood safety", "Move to higher ground when floods threaten.")
	ix := b.caughtUp(t)
	before := reads(t, ctxA, ix)

	// B's documents are made of A's query words, in every field, many times over.
	flood := func(tenant uuid.UUID, prefix string) {
		t.Helper()
		for i := range 30 {
			b.saveAs(t, tenant, ragd.NewVersion{SourceKey: fmt.Sprintf("%s%d", prefix, i), Format: "text", Title: "Earthquake safety gas leak",
				ContentHash: fmt.Sprint(i), Chunks: []ragd.Chunk{{Heading: "Gas leak", Text: "gas leak earthquake shaking gas boiler leak aftershock smell"}}})
		}
		n, err := ix.CatchUp(b.ctx, b.store)
		require.NoError(t, err)
		require.Equal(t, 30, n)
	}
	flood(tenantB, "b")
	dfB, err := ix.DocFreq(ctxB, "_all", index.Terms("gas leak earthquake"))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ga": 30, "leak": 30, "earthquak": 30}, dfB, "B's documents are in B's index")
	hitsB, err := ix.Search(ctxB, "gas leak after the earthquake shaking", 40)
	require.NoError(t, err)
	require.Len(t, hitsB, 30, "B finds its own chunks and none of A's")

	require.Equal(t, before, reads(t, ctxA, ix), "A reads the same, bit for bit, after B's ingest")

	// Reopened (as after a restart), A still reads the same.
	require.NoError(t, ix.Close())
	ix, err = index.Open(b.dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	require.Equal(t, before, reads(t, ctxA, ix), "and after a restart")

	// The same documents in A's own index do move A's statistics: the comparison above can fail.
	flood(ragd.DefaultTenant, "a")
	after := reads(t, ctxA, ix)
	require.NotEqual(t, before.Search, after.Search)
	require.NotEqual(t, before.Coverage, after.Coverage)
	require.NotEqual(t, before.DocFreqAll, after.DocFreqAll)
}

// Each tenant's index follows its own chunks: a change of one tenant is applied to its index
// only, after a restart the index catches up from where it stopped, and a tenant without chunks
// reads an empty index without one being made for it.
func TestCatchUpRoutesChangesByTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	tenantC, err := b.store.EnsureTenant(b.ctx, "gamma")
	require.NoError(t, err)
	ctxA := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: ragd.DefaultTenant})
	ctxB := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenantB})
	ctxC := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenantC})

	b.save(t, "a", "1", "A", "alpha text")
	b.saveAs(t, tenantB, ragd.NewVersion{SourceKey: "b", Format: "text", Title: "B", ContentHash: "1",
		Chunks: []ragd.Chunk{{Text: "bravo text"}}})
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	seqA, seqB := ix.TenantSeq(ctxA), ix.TenantSeq(ctxB)
	require.Positive(t, seqA)
	require.Greater(t, seqB, seqA)
	require.Equal(t, seqB, ix.Seq())
	hits, err := ix.Search(ctxC, "text", 10)
	require.NoError(t, err)
	require.Empty(t, hits, "a tenant without chunks finds nothing")
	require.Zero(t, ix.TenantSeq(ctxC))
	_, err = os.Stat(filepath.Join(b.dir, "tenants", tenantC.String()))
	require.ErrorIs(t, err, os.ErrNotExist, "reading makes no index")
	count, err := ix.DocCount()
	require.NoError(t, err)
	require.EqualValues(t, 2, count)
	require.NoError(t, ix.Close())

	// While closed, B changes; reopened, only that change is read, and A's index is untouched.
	b.saveAs(t, tenantB, ragd.NewVersion{SourceKey: "b", Format: "text", Title: "B", ContentHash: "2",
		Chunks: []ragd.Chunk{{Text: "bravo charlie"}}})
	ix, err = index.Open(b.dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	require.Equal(t, seqB, ix.Seq(), "the sequence every tenant is caught up to survives a restart")
	n, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the old chunk out, the new one in")
	require.Equal(t, seqA, ix.TenantSeq(ctxA), "A's index did not move")
	require.Greater(t, ix.TenantSeq(ctxB), seqB)
	hits, err = ix.Search(ctxB, "charlie", 10)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	hits, err = ix.Search(ctxA, "charlie bravo", 10)
	require.NoError(t, err)
	require.Empty(t, hits)
}

// An index of the layout before tenants had their own (one bleve index in dir) is cleared with a
// log line when opened, and rebuilt per tenant from the store by the catch-up that follows.
func TestOldLayoutIsRebuiltPerTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, "a", "1", "A", "alpha text")
	old, err := bleve.New(b.dir, bleve.NewIndexMapping())
	require.NoError(t, err)
	require.NoError(t, old.Index("1", map[string]string{"text": "stale"}))
	require.NoError(t, old.Close())
	foreign := filepath.Join(b.dir, "notes.txt") // not ragd's: left alone
	require.NoError(t, os.WriteFile(foreign, []byte("keep"), 0o644))

	var logs bytes.Buffer
	ix, err := index.Open(b.dir, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	defer ix.Close()
	require.Contains(t, logs.String(), "the BM25 index has the old layout")
	require.Zero(t, ix.Seq())
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"alpha text"}, b.search(t, ix, "alpha"))
	require.Empty(t, b.search(t, ix, "stale"))
	_, err = os.Stat(filepath.Join(b.dir, "index_meta.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(foreign)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(b.dir, "tenants", ragd.DefaultTenant.String()))
	require.NoError(t, err)
}

// The second wall: were a tenant's index to hold a chunk of another tenant (or one marked as
// nobody's), no search of the tenant returns it, and the foreign one is logged. The planted
// chunks match the question better than any of the tenant's, so without the wall they would be
// the first hits. (The planted chunks do move A's statistics, hence the scores: only the order is
// compared.)
func TestSearchNeverReturnsAnotherTenantsChunk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	b.save(t, "quakes", "1", "Earthquake safety", "Drop, cover and hold on during earthquakes.", "Check for gas leaks after the shaking.")
	ix := b.caughtUp(t)
	own, err := ix.Search(b.ctx, "gas leak earthquake", 10)
	require.NoError(t, err)
	require.Len(t, own, 2)
	ownTitle, err := ix.SearchTitle(b.ctx, "gas leak", "Earthquake safety", 10)
	require.NoError(t, err)
	require.NotEmpty(t, ownTitle)
	require.NoError(t, ix.Close())

	// Plant the chunks straight into A's bleve index, as a routing bug or a misplaced directory
	// would.
	dirA := filepath.Join(b.dir, "tenants", ragd.DefaultTenant.String())
	bi, err := bleve.Open(dirA)
	require.NoError(t, err)
	foreign, unmarked := int64(990001), int64(990002)
	for id, tenant := range map[int64]string{foreign: tenantB.String(), unmarked: ""} {
		require.NoError(t, bi.Index(fmt.Sprint(id), map[string]string{"title": "Earthquake safety gas leak",
			"text": "gas leak earthquake gas leak earthquake", "tenant": tenant}))
	}
	direct, err := bi.Search(bleve.NewSearchRequest(bleve.NewMatchQuery("gas leak earthquake")))
	require.NoError(t, err)
	require.Len(t, direct.Hits, 4, "the planted chunks are in A's index and match")
	require.NoError(t, bi.Close())

	var logs bytes.Buffer
	ix, err = index.Open(b.dir, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	defer ix.Close()
	ctxA := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: ragd.DefaultTenant})
	hits, err := ix.Search(ctxA, "gas leak earthquake", 10)
	require.NoError(t, err)
	require.Equal(t, chunkIDs(own), chunkIDs(hits), "A finds its own chunks, in the same order, and nothing else")
	hits, err = ix.SearchIn(ctxA, "gas leak earthquake", 10, []int64{own[0].ChunkID, foreign, unmarked})
	require.NoError(t, err)
	require.Equal(t, []int64{own[0].ChunkID}, chunkIDs(hits))
	hits, err = ix.SearchTitle(ctxA, "gas leak", "Earthquake safety", 10)
	require.NoError(t, err)
	require.Equal(t, chunkIDs(ownTitle), chunkIDs(hits))
	require.Contains(t, logs.String(), "holds chunks not marked as the tenant's")
	require.Contains(t, logs.String(), fmt.Sprint(foreign))

	// B's own index does not have them: B finds nothing.
	hits, err = ix.Search(ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenantB}), "gas leak earthquake", 10)
	require.NoError(t, err)
	require.Empty(t, hits)

	// The bounded search (every word frequent here) checks its hits the same way.
	require.NoError(t, ix.Close())
	bounded, err := index.OpenWith(b.dir, slog.New(slog.NewTextHandler(&logs, nil)), index.Options{FrequentChunks: 1, Candidates: 10})
	require.NoError(t, err)
	defer bounded.Close()
	hits, err = bounded.Search(ctxA, "gas leak earthquake", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.Subset(t, chunkIDs(own), chunkIDs(hits), "A finds its own chunks (those with the rarest word) and nothing else")
}

func chunkIDs(hits []ragd.Hit) []int64 {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
	}
	return ids
}
