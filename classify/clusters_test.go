package classify

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/wordvec"
)

// clusterMates returns up to n words of the table that share word's fine cluster, in the
// table's (frequency) order, without word itself.
func clusterMates(t *testing.T, word string, n int) []string {
	t.Helper()
	tab := wordvec.Embedded()
	c, ok := tab.Cluster(word, wordvec.Fine)
	require.True(t, ok, word)
	var out []string
	for i := 0; i < tab.Len() && len(out) < n; i++ {
		w := tab.Word(i)
		if d, _ := tab.Cluster(w, wordvec.Fine); d == c && w != word && Words(w)[0] == w {
			out = append(out, w)
		}
	}
	require.Len(t, out, n, "%s has too few cluster-mates", word)
	return out
}

// A model with cluster features reads a word it never saw by the words of its cluster that it
// did see; without them, the word carries nothing.
func TestClustersGeneraliseToUnseenWords(t *testing.T) {
	t.Parallel()
	// Rows of one cluster-mate of "forklift" (never "forklift") against rows of cluster-mates of
	// "soup", in the same frame, so that only the content word tells the labels apart.
	var ex []Example
	for _, w := range clusterMates(t, "forklift", 4) {
		ex = append(ex, Example{Input: Input{Text: "we need the " + w}, Label: "machine"})
	}
	for _, w := range clusterMates(t, "soup", 4) {
		ex = append(ex, Example{Input: Input{Text: "we need the " + w}, Label: "food"})
	}
	for _, e := range ex {
		require.NotContains(t, Words(e.Input.Text), "forklift")
	}
	opts := toyOptions()
	opts.CharNGrams = false // so that the plain model has no feature at all of an unseen word
	plain, err := Train(ex, opts)
	require.NoError(t, err)
	opts.FineClusters = 1
	m, err := Train(ex, opts)
	require.NoError(t, err)

	label, probs := m.Predict(Input{Text: "forklift"})
	require.Equal(t, "machine", label)
	require.Greater(t, probs[m.indexOf("machine")], 0.6)
	_, nothing := plain.Predict(Input{Text: "qzxjvwq"})
	_, pp := plain.Predict(Input{Text: "forklift"})
	require.Equal(t, nothing, pp, "without clusters an unseen word reads as a text of no known word")
}

// The block counts each known word's cluster once per occurrence, like the words' block, and
// is scaled by the level's weight; unknown words and punctuation add nothing.
func TestClusterCounts(t *testing.T) {
	t.Parallel()
	h := hasher{mask: 1<<18 - 1}
	tab := wordvec.Embedded()
	dog, ok := tab.Cluster("dog", wordvec.Coarse)
	require.True(t, ok)
	counts := clusterCounts(h, wordvec.Coarse, Tokenize("Dog, dog! qzxjvwq doesn't"))
	does, ok := tab.Cluster("does", wordvec.Coarse) // "doesn't" by wordvec.Forms
	require.True(t, ok)
	want := map[uint32]float64{h.bucket("coarse:" + strconv.Itoa(dog)): 2}
	want[h.bucket("coarse:"+strconv.Itoa(does))]++
	require.Equal(t, want, counts)
	require.Empty(t, clusterCounts(h, wordvec.Fine, Tokenize("qzxjvwq ?!")))

	opts := toyOptions()
	opts.CharNGrams = false
	plain, _ := featurize(Input{Text: "the dog"}, opts)
	opts.CoarseClusters, opts.FineClusters = 0.5, 0.25
	with, _ := featurize(Input{Text: "the dog"}, opts)
	var sqPlain, sqWith float64
	for _, f := range plain {
		sqPlain += f.value * f.value
	}
	for _, f := range with {
		sqWith += f.value * f.value
	}
	// Two more blocks, of norms 0.5 and 0.25 (bucket collisions aside, which "the dog" has not).
	require.Len(t, with, len(plain)+4)
	require.InDelta(t, sqPlain+0.25+0.0625, sqWith, 1e-12)
}

// A model saved before the cluster options existed (testdata, written by the code of main at
// 7365b94) loads, scores to the bit as it did then, and saves to the same bytes.
func TestModelsBeforeClustersUnchanged(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/model_before_clusters.json")
	require.NoError(t, err)
	m, err := LoadBytes(old)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	require.Equal(t, string(old), buf.String())
	require.NotContains(t, buf.String(), "clusters")

	b, err := os.ReadFile("testdata/scores_before_clusters.json")
	require.NoError(t, err)
	var rows []struct {
		Input Input     `json:"input"`
		Probs []float64 `json:"probs"`
	}
	require.NoError(t, json.Unmarshal(b, &rows))
	require.NotEmpty(t, rows)
	for _, r := range rows {
		_, p := m.Predict(r.Input)
		require.Equal(t, r.Probs, p, r.Input.Text) // identical, not just close
	}
}

func TestClustersSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.CoarseClusters, opts.FineClusters = 0.5, 1
	opts.CalibrationFolds = 3
	m, err := Train(wordVectorToy(), opts)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	require.Contains(t, buf.String(), `"clusters_table": "`+wordvec.Embedded().ClustersID()+`"`)
	require.Contains(t, buf.String(), `"coarse_clusters":0.5,"fine_clusters":1`)
	loaded, err := LoadBytes(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, m.Options(), loaded.Options())
	for _, text := range []string{"shrimp lobster crab", "kernel debugger", "qzxjvwq", "", "no peanuts"} {
		l1, p1 := m.Predict(Input{Text: text})
		l2, p2 := loaded.Predict(Input{Text: text})
		require.Equal(t, l1, l2, text)
		require.Equal(t, p1, p2, text)
	}
	var again bytes.Buffer
	require.NoError(t, loaded.Save(&again))
	require.Equal(t, buf.String(), again.String())

	// A file trained with other clusters, or whose clusters disagree with its options, is refused.
	for _, bad := range []struct{ from, to string }{
		{`"clusters_table": "`, `"clusters_table": "0000`},
		{`"coarse_clusters":0.5,"fine_clusters":1,`, ``},
		{`"clusters_table": "` + wordvec.Embedded().ClustersID() + `",` + "\n", ``},
	} {
		s := strings.Replace(buf.String(), bad.from, bad.to, 1)
		require.NotEqual(t, buf.String(), s)
		_, err := LoadBytes([]byte(s))
		require.Error(t, err, bad.from)
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"CoarseClusters", "FineClusters"} {
		for _, v := range []float64{-0.5, math.NaN(), math.Inf(1)} {
			o := DefaultOptions()
			if field == "CoarseClusters" {
				o.CoarseClusters = v
			} else {
				o.FineClusters = v
			}
			_, err := Train(toy(), o)
			require.ErrorContains(t, err, field, "%s = %g", field, v)
		}
	}
	o := DefaultOptions()
	o.CoarseClusters, o.FineClusters = 0, 2
	require.NoError(t, o.validate())
}

// The cost of the cluster blocks per Predict, against the same model without them:
//
//	go test ./classify -run '^$' -bench Clusters -benchmem
func BenchmarkPredictClusters(b *testing.B) {
	text := "The build fails on the forklift controller after the firmware update; how do I roll it back?"
	for _, bc := range []struct {
		name         string
		coarse, fine float64
	}{{"off", 0, 0}, {"fine", 0, 1}, {"coarse+fine", 1, 1}} {
		opts := DefaultOptions()
		opts.MinCount, opts.CalibrationFolds, opts.Epochs = 1, 0, 20
		opts.WordVectors = 1
		opts.CoarseClusters, opts.FineClusters = bc.coarse, bc.fine
		m, err := Train(wordVectorToy(), opts)
		require.NoError(b, err)
		in := Input{Text: text, Context: map[string]string{"prev": "the firmware update broke it"}}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				m.Predict(in)
			}
		})
	}
}
