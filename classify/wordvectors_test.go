package classify

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dietary and technical requests with no word in common with the test inputs below.
func wordVectorToy() []Example {
	var ex []Example
	food := []string{"no peanuts in the salad", "keep the soup free of almonds", "avoid milk and cheese", "skip eggs in the cake", "no wheat bread please", "serve it without butter"}
	code := []string{"the compiler throws a syntax error", "refactor the function into a module", "the server returns a timeout", "rename the variable in the script", "the database query is slow", "add a unit test for the parser"}
	for i := range food {
		ex = append(ex,
			Example{Input: Input{Text: food[i]}, Label: "food"},
			Example{Input: Input{Text: code[i]}, Label: "code"},
		)
	}
	return ex
}

// A model with the block reads words it never saw by what they are like; without it, words it
// never saw carry nothing.
func TestWordVectorsGeneraliseToUnseenWords(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.CharNGrams = false // so that the plain model has no feature at all of an unseen word
	plain, err := Train(wordVectorToy(), opts)
	require.NoError(t, err)
	opts.WordVectors = 1
	m, err := Train(wordVectorToy(), opts)
	require.NoError(t, err)
	_, nothing := plain.Predict(Input{Text: "qzxjvwq"})
	unseen := map[string]string{
		"shrimp lobster crab":        "food",
		"shellfish oysters mussels":  "food",
		"kernel debugger stacktrace": "code",
		"javascript compile linker":  "code",
	}
	for text, want := range unseen {
		for _, w := range Words(text) {
			for _, ex := range wordVectorToy() {
				require.NotContains(t, Words(ex.Input.Text), w, "the test words must be unseen")
			}
		}
		label, probs := m.Predict(Input{Text: text})
		require.Equal(t, want, label, text)
		require.Greater(t, probs[m.indexOf(want)], 0.6, text)
		_, pp := plain.Predict(Input{Text: text})
		require.Equal(t, nothing, pp, "without vectors %q reads as a text of no known word", text)
	}
}

func (m *Model) indexOf(label string) int {
	for i, l := range m.labels {
		if l == label {
			return i
		}
	}
	return -1
}

// At 0 there is no block: the model is the one trained before the option existed, to the byte
// (its file has no word-vector key), and predicts identically.
func TestWordVectorsOffChangesNothing(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.CalibrationFolds = 3
	off, err := Train(toy(), opts)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, off.Save(&buf))
	require.NotContains(t, buf.String(), "word_vectors")
	require.Nil(t, off.dense)
	require.Nil(t, wordVectors(Tokenize("shrimp and crab"), opts))

	opts.WordVectors = 0.5
	on, err := Train(toy(), opts)
	require.NoError(t, err)
	require.Len(t, on.dense, 100)
	var onBuf bytes.Buffer
	require.NoError(t, on.Save(&onBuf))
	require.Contains(t, onBuf.String(), `"word_vectors": [[`)
	require.Contains(t, onBuf.String(), `"word_vectors":0.5`)
	_, p0 := off.Predict(Input{Text: "will it snow?"})
	_, p1 := on.Predict(Input{Text: "will it snow?"})
	require.NotEqual(t, p0, p1, "the block takes part")
}

// The block is the mean word vector, L2-normalised, times the weight; unknown words are
// skipped and a text without a known word has no block.
func TestWordVectorsBlock(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.WordVectors = 0.7
	v := wordVectors(Tokenize("No shrimp, qzxjvwq!"), opts)
	require.Len(t, v, 100)
	var sq float64
	for _, x := range v {
		sq += x * x
	}
	require.InDelta(t, 0.7, math.Sqrt(sq), 1e-12)
	require.Equal(t, v, wordVectors(Tokenize("no shrimp"), opts), "the unknown word and the punctuation are skipped")
	require.Nil(t, wordVectors(Tokenize("qzxjvwq ?!"), opts))
	require.Nil(t, wordVectors(Tokenize(""), opts))
}

func TestWordVectorsSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	opts := toyOptions()
	opts.WordVectors = 1
	opts.CalibrationFolds = 3
	m, err := Train(wordVectorToy(), opts)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := LoadBytes(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, m.Options(), loaded.Options())
	for _, text := range []string{"shrimp lobster crab", "kernel debugger", "qzxjvwq", "", "no peanuts"} {
		l1, p1 := m.Predict(Input{Text: text})
		l2, p2 := loaded.Predict(Input{Text: text})
		require.Equal(t, l1, l2, text)
		require.Equal(t, p1, p2, text) // identical, not just close
	}
	var again bytes.Buffer
	require.NoError(t, loaded.Save(&again))
	require.Equal(t, buf.String(), again.String())

	// A file whose weights were trained with another table, or that disagrees with its option,
	// is refused.
	for _, bad := range []struct{ from, to string }{
		{`"word_vectors_table": "`, `"word_vectors_table": "0000`},
		{`"word_vectors":1,`, ``},
	} {
		s := strings.Replace(buf.String(), bad.from, bad.to, 1)
		require.NotEqual(t, buf.String(), s)
		_, err := LoadBytes([]byte(s))
		require.Error(t, err, bad.from)
	}
	_, err = Train(wordVectorToy(), Options{HashBits: 18, Epochs: 1, LearningRate: 1, WordVectors: -1})
	require.ErrorContains(t, err, "WordVectors")
}
