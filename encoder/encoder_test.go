package encoder_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/internal/modeltest"
)

// ONNX Runtime is process-global, so the order matters here: first a library that cannot load
// (explicit ORT is an error, Auto falls back to Go and says why), then the real one.
func TestResolve(t *testing.T) {
	missing := encoder.Config{Runtime: encoder.ORT, ORTLibrary: "/nonexistent/libonnxruntime.so.1"}
	_, _, err := encoder.Resolve(missing)
	require.ErrorContains(t, err, "/nonexistent/libonnxruntime.so.1")

	missing.Runtime = encoder.Auto
	rt, fallback, err := encoder.Resolve(missing)
	require.NoError(t, err)
	require.Equal(t, encoder.Go, rt)
	require.Contains(t, fallback, "/nonexistent/libonnxruntime.so.1")

	rt, _, err = encoder.Resolve(encoder.Config{Runtime: encoder.Go})
	require.NoError(t, err)
	require.Equal(t, encoder.Go, rt)

	rt, fallback, err = encoder.Resolve(encoder.Config{Runtime: encoder.Auto, ORTLibrary: modeltest.ORTLibrary()})
	require.NoError(t, err)
	require.Equal(t, encoder.ORT, rt, "with the library installed, auto means ONNX Runtime")
	require.Empty(t, fallback)
}

func TestEncodePairMarksSecondSegment(t *testing.T) {
	t.Parallel()
	m, err := encoder.Inspect(modeltest.Dir(t, modeltest.CrossEncoder))
	require.NoError(t, err)
	require.True(t, m.IsCrossEncoder())
	require.Equal(t, 512, m.MaxPositions)
	tk, err := encoder.NewTokenizer(m)
	require.NoError(t, err)

	s, err := tk.EncodePair("vitamin d", "bone loss")
	require.NoError(t, err)
	// [CLS] vitamin d [SEP] bone loss [SEP] (ids from vocab.txt): BERT's pair layout, no padding.
	require.Equal(t, []int64{101, 17663, 1040, 102, 5923, 3279, 102}, s.IDs)
	require.Equal(t, []int64{0, 0, 0, 0, 1, 1, 1}, s.Types)

	long, err := tk.Encode(repeat("word ", 2000))
	require.NoError(t, err)
	require.Len(t, long.IDs, 512, "cut to the model's maximum length")
}

// Invalid UTF-8 reads as U+FFFD instead of reaching the tokenizer, which panics on it when
// multibyte text follows.
func TestInvalidUTF8ReadsAsReplacement(t *testing.T) {
	t.Parallel()
	tk := crossEncoderTokenizer(t)

	got, err := tk.EncodePair("invalid \xff utf-8", "ÉTÉ Kelvin K 中文")
	require.NoError(t, err)
	want, err := tk.EncodePair("invalid \uFFFD utf-8", "ÉTÉ Kelvin K 中文")
	require.NoError(t, err)
	require.Equal(t, want, got)

	ids, err := tk.IDs("\xffÉTÉ 中文")
	require.NoError(t, err)
	wantIDs, err := tk.IDs("\uFFFDÉTÉ 中文")
	require.NoError(t, err)
	require.Equal(t, wantIDs, ids)
}

// crossEncoderTokenizer is the tokenizer of the stand-in cross-encoder.
func crossEncoderTokenizer(t *testing.T) *encoder.Tokenizer {
	t.Helper()
	m, err := encoder.Inspect(modeltest.Dir(t, modeltest.CrossEncoder))
	require.NoError(t, err)
	tk, err := encoder.NewTokenizer(m)
	require.NoError(t, err)
	return tk
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

func TestBatches(t *testing.T) {
	t.Parallel()
	got := encoder.Batches([]int{5, 1, 4, 2, 3}, 2)
	require.Equal(t, [][]int{{1, 3}, {4, 2}, {0}}, got, "grouped by length, at most 2 each")
	require.Empty(t, encoder.Batches(nil, 4))
}

// The model's threads wait asleep: spinning ones take the cores ingest's other work needs.
// (After TestResolve, which must see the library unloaded first.)
func TestSessionThreadsDoNotSpin(t *testing.T) {
	_, err := encoder.LoadORT(modeltest.ORTLibrary())
	require.NoError(t, err)
	opts, err := encoder.SessionOptions(2)
	require.NoError(t, err)
	defer opts.Destroy()
	spin, err := opts.GetSessionConfigEntry("session.intra_op.allow_spinning")
	require.NoError(t, err)
	require.Equal(t, "0", spin)
}

// OpenORT runs the callers' sequences in one graph run, padded to the longest, and hands read
// the whole output; after Close, Run fails with ErrClosed instead of reaching a freed session.
func TestOpenORT(t *testing.T) {
	t.Parallel()
	m, err := encoder.Inspect(modeltest.Dir(t, modeltest.Embedding))
	require.NoError(t, err)
	cfg := encoder.Config{Runtime: encoder.ORT, ORTLibrary: modeltest.ORTLibrary()}.WithDefaults()
	_, err = encoder.LoadORT(cfg.ORTLibrary)
	require.NoError(t, err)
	o, err := encoder.OpenORT(m, cfg, func(out encoder.Output, seqs []encoder.Sequence) ([][]int64, error) {
		shapes := make([][]int64, len(seqs))
		for i := range seqs {
			shapes[i] = out.Shape
		}
		return shapes, nil
	})
	require.NoError(t, err)
	short, err := o.Tokenizer.Encode("vitamin d")
	require.NoError(t, err)
	long, err := o.Tokenizer.Encode("vitamin d and bone loss in older adults")
	require.NoError(t, err)
	got, err := o.Run(t.Context(), []encoder.Sequence{short, long})
	require.NoError(t, err)
	want := []int64{2, int64(len(long.IDs)), int64(m.HiddenSize)}
	require.Equal(t, [][]int64{want, want}, got)

	require.NoError(t, o.Close())
	_, err = o.Run(t.Context(), []encoder.Sequence{short})
	require.ErrorIs(t, err, encoder.ErrClosed)
}

// Pair builds from token ids what EncodePair builds from text, to the id and the type: on
// SciFact passages with questions, passages over the model's length, and odd text (a query
// holding "[SEP]", empty sides, accents and CJK; invalid UTF-8 never gets here: requests and
// the store refuse it).
func TestPairIsEncodePair(t *testing.T) {
	t.Parallel()
	tk := crossEncoderTokenizer(t)
	type pair struct{ q, p string }
	pairs := []pair{{"vitamin d", "bone loss"}, {"", "bone loss"}, {"vitamin d", ""}, {"", ""},
		{"a [SEP] b", "c [SEP] d"}, {"naïve café", "ÉTÉ Kelvin \u212a 中文"},
		{"word", repeat("word ", 2000)}, {repeat("query ", 600), "passage"}}
	docs := modeltest.Corpus(t, "scifact", 200)
	for i, d := range docs {
		q := docs[(i+1)%len(docs)].Title
		pairs = append(pairs, pair{q, d.Title + "\n" + d.Text})
		if i%10 == 0 {
			pairs = append(pairs, pair{q, d.Text + " " + d.Text + " " + d.Text}) // past 512 tokens
		}
	}
	for _, p := range pairs {
		want, err := tk.EncodePair(p.q, p.p)
		require.NoError(t, err)
		q, err := tk.IDs(p.q)
		require.NoError(t, err)
		passage, err := tk.IDs(p.p)
		require.NoError(t, err)
		got, err := tk.Pair(q, passage)
		require.NoError(t, err)
		require.Equal(t, want, got, "%q / %.60q", p.q, p.p)
	}
}
