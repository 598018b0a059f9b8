package rerank

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ragd/ragd/encoder"
)

// ErrWindow means a window the model cannot use.
var ErrWindow = errors.New("window too long")

// Option changes how a Scorer scores.
type Option func(*Scorer)

// WithWindow scores each passage longer than n model tokens on its query-centred window: the n
// tokens in a row that hold the most of the query's weight. A cross-encoder's cost grows with
// the length of the pair, so a window trades some of the passage for speed. n <= 0 scores whole
// passages (the default).
func WithWindow(n int) Option {
	return func(s *Scorer) { s.window = max(n, 0) }
}

// tokens is a query and its passages as model token ids (no special tokens), read once for the
// window and for the model's input; starts says which passage tokens start a word.
type tokens struct {
	query    []int
	passages [][]int
	starts   [][]bool
}

// tokenize reads query and passages into tokens.
func tokenize(tk *encoder.Tokenizer, query string, passages []string) (tokens, error) {
	q, err := tk.IDs(query)
	if err != nil {
		return tokens{}, err
	}
	t := tokens{query: q, passages: make([][]int, len(passages)), starts: make([][]bool, len(passages))}
	for i, p := range passages {
		if t.passages[i], t.starts[i], err = tk.Words(p); err != nil {
			return tokens{}, err
		}
	}
	return t, nil
}

// window replaces every passage longer than n tokens by its best window and reports which it cut.
// A query token weighs log((N+1)/df), df being how many of the N passages hold it: words every
// candidate shares ("the", "of", the topic itself) count for almost nothing, so the window lands
// where the question's distinctive words are, with no stop list. Ties go to the earliest window,
// which keeps a passage's opening (often its title) when nothing better shows. A window starts
// at a word's start, so the model never reads a word's tail as if it were a word, and its text
// reads back as its tokens: both runtimes read the same input.
func (t tokens) window(n int) []bool {
	inQuery := make(map[int]bool, len(t.query))
	for _, id := range t.query {
		inQuery[id] = true
	}
	df := make(map[int]int, len(inQuery))
	for _, ids := range t.passages {
		seen := make(map[int]bool)
		for _, id := range ids {
			if inQuery[id] && !seen[id] {
				seen[id] = true
				df[id]++
			}
		}
	}
	weight := make(map[int]float64, len(df))
	for id, d := range df {
		weight[id] = math.Log(float64(len(t.passages)+1) / float64(d))
	}
	cut := make([]bool, len(t.passages))
	for i, ids := range t.passages {
		if len(ids) > n {
			start := bestWindow(ids, t.starts[i], n, weight)
			t.passages[i], cut[i] = ids[start:start+n], true
		}
	}
	return cut
}

// windows returns passages with every passage longer than n tokens replaced by the text of its
// best window (see tokens.window), for a runtime that tokenizes text itself.
func windows(tk *encoder.Tokenizer, n int, query string, passages []string) ([]string, error) {
	t, err := tokenize(tk, query, passages)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(passages)
	for i, cut := range t.window(n) {
		if cut {
			out[i] = tk.Decode(t.passages[i])
		}
	}
	return out, nil
}

// bestWindow returns the start of the n-token run of ids with the largest total weight, the
// earliest on ties, among the starts that starts allows (every one when nil; the first always).
// len(ids) > n > 0.
func bestWindow(ids []int, starts []bool, n int, weight map[int]float64) int {
	var sum float64
	for _, id := range ids[:n] {
		sum += weight[id]
	}
	best, bestSum := 0, sum
	for s := 1; s+n <= len(ids); s++ {
		sum += weight[ids[s+n-1]] - weight[ids[s-1]]
		// A small tolerance keeps float drift in the running sum from moving a tie.
		if (starts == nil || starts[s]) && sum > bestSum+1e-9 {
			best, bestSum = s, sum
		}
	}
	return best
}

// checkWindow refuses a window as long as the model's whole input: it could never cut anything.
func (s *Scorer) checkWindow() error {
	if s.window > 0 && s.window >= s.model.MaxPositions {
		return fmt.Errorf("%w: %d tokens, and the model takes at most %d tokens per pair, so it would never cut anything",
			ErrWindow, s.window, s.model.MaxPositions)
	}
	return nil
}
