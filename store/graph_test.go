package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/kg"
	"github.com/ragd/ragd/store"
)

// entitiesNamed builds one chunk's entities from names, all proper nouns but "nfl" and "s3".
func entitiesNamed(names ...string) []kg.Entity {
	out := make([]kg.Entity, len(names))
	for i, n := range names {
		kind := kg.Proper
		if n == "nfl" || n == "s3" {
			kind = kg.Acronym
		}
		out[i] = kg.Entity{Name: n, Kind: kind, Surface: n}
	}
	return out
}

// saveChunks saves a document with n chunks and returns its id and chunk ids in order.
func saveChunks(ctx context.Context, t testing.TB, s *store.Store, key string, n int) (uuid.UUID, []int64) {
	t.Helper()
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s chunk %d", key, i)
	}
	res, err := s.SaveVersions(ctx, []ragd.NewVersion{version(key, "h", texts...)})
	require.NoError(t, err)
	cs, err := s.VersionChunks(ctx, res[0].DocID, res[0].Version)
	require.NoError(t, err)
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return res[0].DocID, ids
}

func TestSaveGraph(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	docA, a := saveChunks(ctx, t, s, "a", 3)
	_, b := saveChunks(ctx, t, s, "b", 2)

	require.NoError(t, s.SaveGraph(ctx, a, [][]kg.Entity{
		entitiesNamed("bank of america", "nfl", "gdpr"),
		entitiesNamed("bank of america", "nfl"),
		entitiesNamed("arizona cardinals", "nfl"),
	}, 10))
	// A second batch adds to the weights of the first: nfl and arizona cardinals share a2 and b1.
	require.NoError(t, s.SaveGraph(ctx, b, [][]kg.Entity{
		entitiesNamed("bank of america", "s3"),
		entitiesNamed("nfl", "arizona cardinals", "nfl"),
	}, 10))

	nfl := []ragd.Neighbour{
		{Name: "arizona cardinals", Kind: "proper", Weight: 2, Via: "nfl"},
		{Name: "bank of america", Kind: "proper", Weight: 2, Via: "nfl"},
		{Name: "gdpr", Kind: "proper", Weight: 1, Via: "nfl"},
	}
	got, err := s.Neighbours(ctx, []string{"nfl"}, 10)
	require.NoError(t, err)
	require.Equal(t, nfl, got, "heaviest first, ties by name")

	got, err = s.Neighbours(ctx, []string{"nfl"}, 1)
	require.NoError(t, err)
	require.Equal(t, nfl[:1], got, "at most limit")

	got, err = s.Neighbours(ctx, []string{"nfl", "bank of america", "unknown"}, 10)
	require.NoError(t, err)
	require.Equal(t, []ragd.Neighbour{
		{Name: "arizona cardinals", Kind: "proper", Weight: 2, Via: "nfl"},
		// gdpr is one edge from both with weight 1: it comes once, through the first name.
		{Name: "gdpr", Kind: "proper", Weight: 1, Via: "bank of america"},
		{Name: "s3", Kind: "acronym", Weight: 1, Via: "bank of america"},
	}, got, "the entities asked about are not their own neighbours")

	// Saving chunks again adds nothing: their co-occurrence was counted.
	require.NoError(t, s.SaveGraph(ctx, b, [][]kg.Entity{
		entitiesNamed("bank of america", "s3"),
		entitiesNamed("nfl", "arizona cardinals"),
	}, 10))
	got, err = s.Neighbours(ctx, []string{"nfl"}, 10)
	require.NoError(t, err)
	require.Equal(t, nfl, got, "a retried batch adds no weight")

	ids, err := s.EntityChunks(ctx, []string{"nfl", "bank of america", "unknown"}, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{a[1], a[0], b[1], b[0], a[2]}, ids, "chunks mentioning both first, then newest")

	ids, err = s.EntityChunks(ctx, []string{"nfl", "bank of america"}, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{a[1], a[0]}, ids)

	require.NoError(t, s.DeleteDocument(ctx, docA))
	ids, err = s.EntityChunks(ctx, []string{"nfl", "bank of america"}, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{b[1], b[0]}, ids, "inactive chunks are left out")
}

func TestSaveGraphCapsEdgesNotMentions(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	_, c := saveChunks(ctx, t, s, "list", 1)

	require.NoError(t, s.SaveGraph(ctx, c, [][]kg.Entity{entitiesNamed("a", "b", "c", "d")}, 2))

	got, err := s.Neighbours(ctx, []string{"a", "c", "d"}, 10)
	require.NoError(t, err)
	require.Equal(t, []ragd.Neighbour{{Name: "b", Kind: "proper", Weight: 1, Via: "a"}}, got,
		"only the first two entities of the chunk are linked")

	ids, err := s.EntityChunks(ctx, []string{"d"}, 10)
	require.NoError(t, err)
	require.Equal(t, c, ids, "every entity is recorded against the chunk")
}

func TestSaveGraphKeepsFirstKind(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	_, c := saveChunks(ctx, t, s, "k", 2)

	require.NoError(t, s.SaveGraph(ctx, c[:1], [][]kg.Entity{{
		{Name: "x", Kind: kg.Code}, {Name: "y", Kind: kg.Code},
	}}, 10))
	require.NoError(t, s.SaveGraph(ctx, c[1:], [][]kg.Entity{{
		{Name: "x", Kind: kg.Link}, {Name: "y", Kind: kg.Link},
	}}, 10))

	got, err := s.Neighbours(ctx, []string{"x"}, 10)
	require.NoError(t, err)
	require.Equal(t, []ragd.Neighbour{{Name: "y", Kind: "code", Weight: 2, Via: "x"}}, got)
}

func TestSaveGraphEmptyAndInvalid(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	_, c := saveChunks(ctx, t, s, "e", 2)

	require.NoError(t, s.SaveGraph(ctx, nil, nil, 10))
	require.NoError(t, s.SaveGraph(ctx, c, [][]kg.Entity{nil, {}}, 10), "chunks without entities")

	for name, err := range map[string]error{
		"lengths differ":   s.SaveGraph(ctx, c, [][]kg.Entity{entitiesNamed("a")}, 10),
		"repeated chunk":   s.SaveGraph(ctx, []int64{c[0], c[0]}, [][]kg.Entity{entitiesNamed("a"), entitiesNamed("b")}, 10),
		"empty name":       s.SaveGraph(ctx, c[:1], [][]kg.Entity{{{Name: "", Kind: kg.Code}}}, 10),
		"neighbours limit": func() error { _, err := s.Neighbours(ctx, []string{"a"}, 0); return err }(),
		"chunks limit":     func() error { _, err := s.EntityChunks(ctx, []string{"a"}, 0); return err }(),
	} {
		require.ErrorIs(t, err, ragd.ErrInvalid, name)
	}

	ns, err := s.Neighbours(ctx, nil, 10)
	require.NoError(t, err)
	require.Empty(t, ns)
	ns, err = s.Neighbours(ctx, []string{"nobody"}, 10)
	require.NoError(t, err)
	require.Empty(t, ns)

	ids, err := s.EntityChunks(ctx, nil, 10)
	require.NoError(t, err)
	require.Empty(t, ids)
	ids, err = s.EntityChunks(ctx, []string{"nobody"}, 10)
	require.NoError(t, err)
	require.Empty(t, ids)
}

// BenchmarkSaveGraph saves the graph of a 2,000-chunk batch with 10 entities per chunk, each
// batch committed as ingest commits them: "new" names entities and edges that do not exist yet,
// "existing" repeats the entities of the batch before, so every edge is an update.
func BenchmarkSaveGraph(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{URL: dbtest.NewDatabase(b), EmbeddingDim: dbtest.Dim})
	require.NoError(b, err)
	b.Cleanup(s.Close)
	const chunks, perChunk = 2000, 10
	entities := func(prefix string) [][]kg.Entity {
		es := make([][]kg.Entity, chunks)
		for i := range es {
			for j := range perChunk {
				// Neighbouring chunks share most of their entities, as the chunks of a document do.
				n := i/4*3 + j
				es[i] = append(es[i], kg.Entity{Name: fmt.Sprintf("%s entity %d", prefix, n), Kind: kg.Proper})
			}
		}
		return es
	}
	batch := 0
	for _, bc := range []struct {
		name   string
		prefix func() string
	}{
		{"new", func() string { return fmt.Sprint(batch) }},
		{"existing", func() string { return "same" }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				batch++
				_, ids := saveChunks(ctx, b, s, fmt.Sprintf("bench-%d", batch), chunks)
				es := entities(bc.prefix())
				b.StartTimer()
				require.NoError(b, s.SaveGraph(ctx, ids, es, 16))
			}
		})
	}
}

func TestGraphCoverage(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	active, with, err := s.GraphCoverage(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]int64{0, 0}, [2]int64{active, with})

	_, a := saveChunks(ctx, t, s, "a", 3)
	active, with, err = s.GraphCoverage(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 0}, [2]int64{active, with}, "chunks saved without entities: no graph")
	missing, err := s.ChunksWithoutEntities(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, missing, 3)
	require.Equal(t, "T a", missing[0].Title, "with the title the entities are read with")

	require.NoError(t, s.SaveGraph(ctx, a[:1], [][]kg.Entity{entitiesNamed("nfl")}, 10))
	active, with, err = s.GraphCoverage(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 1}, [2]int64{active, with})
	missing, err = s.ChunksWithoutEntities(ctx, a[1], 10)
	require.NoError(t, err)
	require.Len(t, missing, 1, "paged by id")
	require.Equal(t, a[2], missing[0].ID)
}
