package rerank

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
)

func TestBestWindow(t *testing.T) {
	t.Parallel()
	w := map[int]float64{7: 2, 9: 1}
	for _, c := range []struct {
		ids  []int
		n    int
		want int
	}{
		{[]int{1, 2, 3, 7, 9, 4, 5}, 2, 3},
		{[]int{7, 1, 1, 1, 7, 1}, 2, 0},    // a tie goes to the earliest
		{[]int{1, 1, 1, 1, 1, 1}, 3, 0},    // nothing of the query: the opening
		{[]int{9, 1, 1, 9, 9, 1, 7}, 3, 4}, // 9 and 7 (1+2) beat 9 and 9 (1+1)
	} {
		require.Equal(t, c.want, bestWindow(c.ids, nil, c.n, w), "%v n=%d", c.ids, c.n)
	}
	// Only word starts may start a window: the best run (7 9 at 3) starts inside a word, so the
	// best that starts one wins (3 7 at 2, over 9 4 at 4).
	ids := []int{1, 2, 3, 7, 9, 4, 5}
	starts := []bool{true, false, true, false, true, false, true}
	require.Equal(t, 2, bestWindow(ids, starts, 2, w))
}

// openORT opens the stand-in cross-encoder on ONNX Runtime for the test.
func openORT(t *testing.T, batch int, opts ...Option) *Scorer {
	s, err := Open(encoder.Config{Dir: modeltest.Dir(t, modeltest.CrossEncoder), Runtime: encoder.ORT,
		ORTLibrary: modeltest.ORTLibrary(), BatchSize: batch}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func tokenizer(t *testing.T) *encoder.Tokenizer {
	m, err := encoder.Inspect(modeltest.Dir(t, modeltest.CrossEncoder))
	require.NoError(t, err)
	tk, err := encoder.NewTokenizer(m)
	require.NoError(t, err)
	return tk
}

func TestWindowsLandOnTheQuestionsDistinctiveWords(t *testing.T) {
	t.Parallel()
	tk := tokenizer(t)
	filler := strings.Repeat("the study of health in older adults was long and careful . ", 6)
	// "in older adults" is in every passage and twice in each stretch of filler: it weighs too
	// little to pull the long passage's window off the question's distinctive words.
	long := filler + "vitamin d deficiency predicts bone loss in the hip . " + filler
	short := "health in older adults ."
	got, err := windows(tk, 16, "does vitamin d prevent bone loss in older adults", []string{long, short, filler})
	require.NoError(t, err)
	require.Contains(t, got[0], "vitamin d deficiency predicts bone loss")
	require.NotContains(t, got[0], "careful . the study") // the window is 16 tokens, not the passage
	n, err := tk.IDs(got[0])
	require.NoError(t, err)
	require.Len(t, n, 16)
	require.Equal(t, short, got[1], "a passage within the window is scored whole")
}

// A window that cuts nothing leaves the scores exactly as without one; a window that cuts a
// long passage changes its score (the model saw less of it).
func TestScoreWithWindow(t *testing.T) {
	t.Parallel()
	cfg := encoder.Config{Dir: modeltest.Dir(t, modeltest.CrossEncoder), Runtime: encoder.ORT,
		ORTLibrary: modeltest.ORTLibrary(), BatchSize: 4}
	open := func(opts ...Option) *Scorer { return openORT(t, 4, opts...) }
	ctx := context.Background()
	q := "does vitamin d prevent bone loss"
	long := strings.Repeat("calcium intake was recorded every year . ", 20) + "vitamin d prevented bone loss ."
	passages := []string{"Vitamin D deficiency is associated with bone loss in older adults.", long}
	whole, err := open().Score(ctx, q, passages)
	require.NoError(t, err)
	wide, err := open(WithWindow(400)).Score(ctx, q, passages)
	require.NoError(t, err)
	require.Equal(t, whole, wide)
	cut, err := open(WithWindow(32)).Score(ctx, q, passages)
	require.NoError(t, err)
	require.Equal(t, whole[0], cut[0])
	require.NotEqual(t, whole[1], cut[1])

	// Both runtimes cut the same window.
	goCfg := cfg
	goCfg.Runtime = encoder.Go
	s, err := Open(goCfg, WithWindow(32))
	require.NoError(t, err)
	defer s.Close()
	pure, err := s.Score(ctx, q, passages)
	require.NoError(t, err)
	require.InDelta(t, cut[1], pure[1], 1e-4)

	_, err = Open(cfg, WithWindow(512))
	require.ErrorContains(t, err, "at most 512 tokens")
}

// On ONNX Runtime the query and each passage are tokenized once, and the window is cut from
// those tokens. Without a window the model's inputs and scores are those of tokenizing each pair
// as text (EncodePair), bit for bit. With one, every window starts at a word's start, so its
// decoded text reads back as exactly its tokens: the inputs are those of tokenizing that text, as
// the pure-Go runtime does. A window that started inside a word used to begin its text with a
// "##" piece, which read back as "#", "#" and another piece.
func TestScoreTokenizesOnce(t *testing.T) {
	t.Parallel()
	whole, windowed := openORT(t, 8), openORT(t, 8, WithWindow(64))
	tk := tokenizer(t)
	docs := modeltest.Corpus(t, "scifact", 80)
	ctx := context.Background()
	cut := 0
	for g := 0; g+40 <= len(docs); g += 40 {
		query := docs[g+1].Title
		passages := make([]string, 40)
		for i, d := range docs[g : g+40] {
			passages[i] = d.Title + "\n" + d.Text
		}

		// No window: the pairs as text, scored as they were.
		want := make([]encoder.Sequence, len(passages))
		for i, p := range passages {
			var err error
			want[i], err = tk.EncodePair(query, p)
			require.NoError(t, err)
		}
		got, err := whole.sequences(query, passages)
		require.NoError(t, err)
		require.Equal(t, want, got)
		if g == 0 { // the model is slow: the scores of one question's first 16 passages
			wantScores, err := whole.ort.Run(ctx, want[:16])
			require.NoError(t, err)
			scores, err := whole.Score(ctx, query, passages[:16])
			require.NoError(t, err)
			require.Equal(t, wantScores, scores, "byte-identical scores")
		}

		// A window of 64: its text reads back as its tokens, and the model's input is that of
		// the text.
		texts, err := windows(tk, 64, query, passages)
		require.NoError(t, err)
		got, err = windowed.sequences(query, passages)
		require.NoError(t, err)
		for i, text := range texts {
			require.False(t, strings.HasPrefix(text, "##"), "a window starts at a word: %.80q", text)
			fromText, err := tk.EncodePair(query, text)
			require.NoError(t, err)
			require.Equal(t, fromText, got[i], "%.80q", text)
			if text != passages[i] {
				ids, err := tk.IDs(text)
				require.NoError(t, err)
				require.Len(t, ids, 64, "the window's text reads back as its 64 tokens: %.80q", text)
				cut++
			}
		}
	}
	require.Positive(t, cut, "the data has passages longer than the window")
	t.Logf("windows cut: %d", cut)
}
