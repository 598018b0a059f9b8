package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

type testBundle struct {
	ctx   context.Context
	tx    pgx.Tx
	store *store.Store
	dir   string
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	tx := dbtest.TestTx(t)
	return &testBundle{
		ctx:   context.Background(),
		tx:    tx,
		store: store.New(tx),
		dir:   filepath.Join(t.TempDir(), "bm25"),
	}
}

// saveAs records versions as tenant's own connection would: its inserts take the tenant.
func (b *testBundle) saveAs(t testing.TB, tenant uuid.UUID, vs ...ragd.NewVersion) {
	t.Helper()
	_, err := b.tx.Exec(b.ctx, "SELECT set_config('ragd.tenant', $1, true)", tenant.String())
	require.NoError(t, err)
	_, err = b.store.SaveVersions(ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenant}), vs)
	require.NoError(t, err)
	_, err = b.tx.Exec(b.ctx, "SELECT set_config('ragd.tenant', '', true)")
	require.NoError(t, err)
}

func (b *testBundle) save(t *testing.T, key, hash, title string, texts ...string) ragd.SaveResult {
	t.Helper()
	v := ragd.NewVersion{SourceKey: key, Format: "text", Title: title, ContentHash: hash}
	for _, s := range texts {
		v.Chunks = append(v.Chunks, ragd.Chunk{Text: s})
	}
	res, err := b.store.SaveVersions(b.ctx, []ragd.NewVersion{v})
	require.NoError(t, err)
	return res[0]
}

// caughtUp opens the index and catches it up with the store; the test closes it when it ends.
func (b *testBundle) caughtUp(t *testing.T) *index.Index {
	t.Helper()
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	return ix
}

// search returns the texts of the chunks found, in rank order.
func (b *testBundle) search(t *testing.T, ix *index.Index, q string) []string {
	t.Helper()
	hits, err := ix.Search(b.ctx, q, 10)
	require.NoError(t, err)
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
		require.Equal(t, i+1, h.Rank)
	}
	cs, err := b.store.Chunks(b.ctx, ids)
	require.NoError(t, err)
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = c.Text
	}
	return texts
}

func TestSearchRanksByBM25(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, "quakes", "1", "Earthquake safety", "Drop, cover and hold on during earthquakes.", "Secure heavy furniture to walls.")
	b.save(t, "floods", "1", "Flood safety", "Move to higher ground when floods threaten.", "Never drive through flooded roads; earthquakes are rarer.")
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 4, n)

	require.Equal(t, []string{
		"Drop, cover and hold on during earthquakes.",
		"Secure heavy furniture to walls.", // matched by its title alone
		"Never drive through flooded roads; earthquakes are rarer.",
	}, b.search(t, ix, "earthquake"), "stemmed, title counts, shorter field ranks higher")

	require.Equal(t, []string{"Move to higher ground when floods threaten."},
		b.search(t, ix, "higher ground"))

	// User text is words, never query syntax: these would be errors or filters in bleve's
	// query-string language.
	for _, q := range []string{`title:"flood`, "+walls -furniture", "walls^5 AND (", "/[a-z/"} {
		_, err := ix.Search(b.ctx, q, 10)
		require.NoError(t, err, q)
	}
	require.Contains(t, b.search(t, ix, "+walls -furniture"), "Secure heavy furniture to walls.",
		"-furniture is not a negation")

	require.Empty(t, b.search(t, ix, "the of and"), "stop words alone match nothing")
	_, err = ix.Search(b.ctx, "x", 0)
	require.ErrorIs(t, err, ragd.ErrInvalid)
}

func TestCatchUpFollowsVersionsAndDeletes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	doc := b.save(t, "guide", "1", "Guide", "alpha bravo")
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha bravo"}, b.search(t, ix, "alpha"))

	b.save(t, "guide", "2", "Guide", "charlie delta")
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Empty(t, b.search(t, ix, "alpha"), "the old version left the index")
	require.Equal(t, []string{"charlie delta"}, b.search(t, ix, "charlie"))

	require.NoError(t, b.store.DeleteDocument(b.ctx, doc.DocID))
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Empty(t, b.search(t, ix, "charlie"))
	count, err := ix.DocCount()
	require.NoError(t, err)
	require.Zero(t, count)

	n, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Zero(t, n, "nothing new, nothing applied")
}

func TestSequenceSurvivesReopenAndLostIndexIsRebuilt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, "a", "1", "A", "first text")
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	_, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	seq := ix.Seq()
	require.Positive(t, seq)

	_, err = index.Open(b.dir, nil)
	require.ErrorIs(t, err, index.ErrLocked, "a second open waits briefly, then says who holds it")
	require.NoError(t, ix.Close())

	b.save(t, "b", "1", "B", "second text")
	ix, err = index.Open(b.dir, nil)
	require.NoError(t, err)
	require.Equal(t, seq, ix.Seq(), "the sequence is stored in the index")
	n, err := ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the change made while closed is applied")
	require.NoError(t, ix.Close())

	// Losing the index costs a catch-up from zero, nothing else.
	require.NoError(t, os.RemoveAll(b.dir))
	ix, err = index.Open(b.dir, nil)
	require.NoError(t, err)
	n, err = ix.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []string{"second text"}, b.search(t, ix, "second"))
	require.NoError(t, ix.Close())

	ix, err = index.Rebuild(b.ctx, b.dir, b.store, nil, index.Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"first text"}, b.search(t, ix, "first"))
	_, err = index.Rebuild(b.ctx, b.dir, b.store, nil, index.Options{})
	require.ErrorIs(t, err, index.ErrLocked, "a rebuild leaves an index a server has open alone")
	require.NoError(t, ix.Close())
}

func TestSearchInAndCoverage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, "quakes", "1", "Earthquake safety", "Drop, cover and hold on during earthquakes.", "Check for gas leaks after the shaking.")
	b.save(t, "gas", "1", "Gas appliances", "Have gas appliances checked every year.")
	ix := b.caughtUp(t)

	all, err := ix.Search(b.ctx, "gas", 10)
	require.NoError(t, err)
	require.Len(t, all, 2)
	only, err := ix.SearchIn(b.ctx, "gas", 10, []int64{all[1].ChunkID})
	require.NoError(t, err)
	require.Len(t, only, 1, "restricted to the chunks given")
	require.Equal(t, all[1].ChunkID, only[0].ChunkID)
	none, err := ix.SearchIn(b.ctx, "gas", 10, []int64{})
	require.NoError(t, err)
	require.Empty(t, none, "an empty restriction matches nothing")

	cov, err := ix.Coverage(b.ctx, "gas leaks after earthquakes", []string{
		"Check for gas leaks after the shaking.", // gas, leak (and stop words)
		"Earthquakes strike without warning.",    // earthquake
		"Boil water after floods.",               // nothing
		"Gas leaks after an earthquake",          // everything, stemmed
	})
	require.NoError(t, err)
	require.Greater(t, cov[0], 0.0)
	require.Greater(t, cov[1], 0.0)
	require.Zero(t, cov[2])
	require.InDelta(t, 1, cov[3], 1e-9)
	require.Less(t, cov[0], 1.0)
	// "leak" is in one chunk and "gas" in two: the rarer term weighs more.
	require.Greater(t, cov[0], cov[1])

	empty, err := ix.Coverage(b.ctx, "the of and", []string{"anything"})
	require.NoError(t, err)
	require.Equal(t, []float64{0}, empty, "a question of stop words covers nothing")
}

func TestCompactMergesIntoOneSegment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ix, err := index.Open(b.dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	for i := range 3 { // three catch-ups, three batches, usually three segments
		b.save(t, fmt.Sprintf("k%d", i), "h", "T", fmt.Sprintf("smoke alarm number %d", i))
		_, err := ix.CatchUp(b.ctx, b.store)
		require.NoError(t, err)
	}
	require.NoError(t, ix.Compact(b.ctx))
	segs, err := ix.Segments()
	require.NoError(t, err)
	require.Equal(t, 1, segs)
	require.Len(t, b.search(t, ix, "smoke alarm"), 3, "every chunk is still found")
}

// With a frequent-word bound, a question that has frequent and rare words is searched by the
// bounded search: the chunks that have a rare word, scored as bleve scores them (a frequent word
// found once in a chunk scores exactly), and no chunk that has only frequent words. A question
// of frequent words only is searched by its rarest, and a corpus no larger than the bound is
// searched exactly. The zero Options search exactly.
func TestBoundedSearchRanksRareWordChunks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	texts := []string{
		"safety safety safety safety safety safety", "gas safety", "gas leak safety", "boiler safety",
	}
	for i := range 12 {
		texts = append(texts, fmt.Sprintf("safety notice number %d", i))
	}
	b.save(t, "doc", "1", "", texts...)
	exactIx := b.caughtUp(t)
	exact, err := exactIx.Search(b.ctx, "gas leak safety", 10)
	require.NoError(t, err)
	exactSafety, err := exactIx.Search(b.ctx, "safety", 10)
	require.NoError(t, err)
	require.NoError(t, exactIx.Close())
	require.Len(t, exact, 10, "the exact search also finds chunks by the frequent word alone")

	for _, o := range []index.Options{{FrequentShare: 1, Candidates: 1}, {FrequentChunks: -1, Candidates: 1}, {FrequentChunks: 10}, {FrequentShare: 0.5}} {
		_, err = index.OpenWith(b.dir, nil, o)
		require.ErrorContains(t, err, "must be in [0, 1), frequent chunks", "%+v", o)
	}

	small, err := index.OpenWith(b.dir, nil, index.Options{FrequentChunks: len(texts), Candidates: 1})
	require.NoError(t, err)
	same, err := small.Search(b.ctx, "gas leak safety", 10)
	require.NoError(t, err)
	require.NoError(t, small.Close())
	require.Equal(t, exact, same, "no word is in more chunks than the bound: the exact search")

	for _, o := range []index.Options{{FrequentChunks: 10, Candidates: 1}, {FrequentShare: 0.5, Candidates: 1}} {
		ix, err := index.OpenWith(b.dir, nil, o)
		require.NoError(t, err)
		got, err := ix.Search(b.ctx, "gas leak safety", 10)
		require.NoError(t, err)
		var want []ragd.Hit
		for _, h := range exact {
			if text := b.textOf(t, h.ChunkID); text == "gas safety" || text == "gas leak safety" {
				want = append(want, h)
			}
		}
		require.Len(t, want, 2)
		require.Equal(t, chunkIDs(want), chunkIDs(got), "%+v: the chunks with a rare word, in the exact search's order", o)
		for i := range want {
			require.InDelta(t, want[i].Score, got[i].Score, 1e-9, "%+v: a frequent word found once scores as bleve scores it", o)
		}

		all, err := ix.Search(b.ctx, "safety", 10)
		require.NoError(t, err)
		require.Equal(t, chunkIDs(exactSafety), chunkIDs(all), "%+v: a question of frequent words only is searched by its rarest", o)
		require.NoError(t, ix.Close())
	}
}

func (b *testBundle) textOf(t *testing.T, id int64) string {
	t.Helper()
	cs, err := b.store.Chunks(b.ctx, []int64{id})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	return cs[0].Text
}
