package wordvec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func cosine(t *testing.T, tab *Table, a, b string) float64 {
	t.Helper()
	va, vb := make([]float64, Dim), make([]float64, Dim)
	require.True(t, tab.Vector(a, va), a)
	require.True(t, tab.Vector(b, vb), b)
	var dot, na, nb float64
	for j := range Dim {
		dot += va[j] * vb[j]
		na += va[j] * va[j]
		nb += vb[j] * vb[j]
	}
	return dot / math.Sqrt(na*nb)
}

// The point of the table: words that are alike are closer than words that are not, including
// words the classifiers' training rows never had.
func TestRelatedWordsAreCloser(t *testing.T) {
	tab := Embedded()
	require.Equal(t, 100000, tab.Len())
	tests := []struct{ word, related, unrelated string }{
		{"shellfish", "shrimp", "compiler"},
		{"allergic", "peanuts", "database"},
		{"speed", "velocity", "recipe"},
		{"crash", "error", "banana"},
		{"must", "should", "guitar"},
	}
	for _, tt := range tests {
		near, far := cosine(t, tab, tt.word, tt.related), cosine(t, tab, tt.word, tt.unrelated)
		require.Greater(t, near, far+0.2, "%s~%s %.3f, %s~%s %.3f", tt.word, tt.related, near, tt.word, tt.unrelated, far)
	}
}

func TestMeanSkipsUnknownWords(t *testing.T) {
	tab := Embedded()
	want := make([]float64, Dim)
	require.Equal(t, 2, tab.Mean([]string{"shrimp", "allergy"}, want))
	got := make([]float64, Dim)
	require.Equal(t, 2, tab.Mean([]string{"qzxjvwq", "shrimp", "zzkfjq-unknown", "allergy"}, got))
	require.Equal(t, want, got)

	one := make([]float64, Dim)
	require.True(t, tab.Vector("shrimp", one))
	for j := range one {
		one[j] = (one[j] + mustVector(t, tab, "allergy")[j]) / 2
	}
	require.InDeltaSlice(t, one, got, 1e-12, "the mean of the two known words")

	none := []float64{1, 2, 3}
	none = append(none, make([]float64, Dim-3)...)
	require.Equal(t, 0, tab.Mean([]string{"qzxjvwq"}, none))
	require.Equal(t, make([]float64, Dim), none, "no known word: a zero vector")
	require.False(t, tab.Has("qzxjvwq"))
}

func mustVector(t *testing.T, tab *Table, w string) []float64 {
	t.Helper()
	v := make([]float64, Dim)
	require.True(t, tab.Vector(w, v), w)
	return v
}

// GloVe's tokenizer split "doesn't" into "does" and "n't", so the table has "does" only.
func TestContractionsFindTheirBase(t *testing.T) {
	tab := Embedded()
	require.Equal(t, []string{"doesn't", "does"}, Forms("doesn't"))
	require.Equal(t, []string{"shellfish"}, Forms("shellfish"))
	require.Equal(t, mustVector(t, tab, "does"), mustVector(t, tab, "doesn't"))
	require.Equal(t, mustVector(t, tab, "robot"), mustVector(t, tab, "robot's"))
	require.False(t, tab.Has("n't"), "a bare clitic has no base")
}

// Quantization keeps every dimension within half a step of the original, and a table written
// and read back is the same table.
func TestQuantizationErrorIsSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "zero"}
	vecs := make([][]float32, len(words))
	for i := range vecs {
		vecs[i] = make([]float32, Dim)
		if words[i] == "zero" {
			continue
		}
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64() * 0.4)
		}
	}
	tab, err := Build(words, vecs)
	require.NoError(t, err)
	for i, w := range words {
		got := mustVector(t, tab, w)
		var top, sq, errSq float64
		for j, x := range vecs[i] {
			top = max(top, math.Abs(float64(x)))
			d := got[j] - float64(x)
			sq += float64(x) * float64(x)
			errSq += d * d
		}
		for j, x := range vecs[i] {
			require.LessOrEqual(t, math.Abs(got[j]-float64(x)), top/127/2*(1+1e-5), "%s[%d]", w, j)
		}
		if sq > 0 {
			require.Less(t, math.Sqrt(errSq/sq), 0.02, "%s: relative error of the whole vector", w)
		}
	}
	var wb, vb bytes.Buffer
	require.NoError(t, tab.WriteTo(&wb, &vb))
	back, err := Read(&wb, &vb)
	require.NoError(t, err)
	require.Equal(t, tab.ID(), back.ID())
	require.Equal(t, mustVector(t, tab, "gamma"), mustVector(t, back, "gamma"))
}

func TestReadRejectsBadTables(t *testing.T) {
	_, err := Read(bytes.NewReader([]byte("a\nb\n")), bytes.NewReader(make([]byte, recordSize)))
	require.ErrorContains(t, err, "for 2 words")
	_, err = Read(bytes.NewReader([]byte("a\na\n")), bytes.NewReader(make([]byte, 2*recordSize)))
	require.ErrorContains(t, err, "twice")
	_, err = Build([]string{"a"}, [][]float32{make([]float32, 3)})
	require.ErrorContains(t, err, "3 dimensions")
}

// What the first use of the table costs (parsing the embedded words into the index).
func BenchmarkRead(b *testing.B) {
	for b.Loop() {
		if _, err := newTable(splitWords(string(wordsTxt)), vectorsBin); err != nil {
			b.Fatal(err)
		}
	}
}

// What a clause's mean vector costs.
func BenchmarkMean(b *testing.B) {
	tab := Embedded()
	words := []string{"i", "am", "allergic", "to", "shellfish", "so", "no", "recipes", "with", "shrimp", "please", "doesn't"}
	dst := make([]float64, Dim)
	for b.Loop() {
		tab.Mean(words, dst)
	}
}
