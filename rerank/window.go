package rerank

import (
	"errors"
	"fmt"
	"math"

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

// windows returns passages with every passage longer than n tokens replaced by the text of its
// best window. A query token weighs log((N+1)/df), df being how many of the N passages hold it:
// words every candidate shares ("the", "of", the topic itself) count for almost nothing, so the
// window lands where the question's distinctive words are, with no stop list. Ties go to the
// earliest window, which keeps a passage's opening (often its title) when nothing better shows.
func windows(tk *encoder.Tokenizer, n int, query string, passages []string) ([]string, error) {
	q, err := tk.IDs(query)
	if err != nil {
		return nil, err
	}
	inQuery := make(map[int]bool, len(q))
	for _, id := range q {
		inQuery[id] = true
	}
	ids := make([][]int, len(passages))
	df := make(map[int]int, len(inQuery))
	for i, p := range passages {
		if ids[i], err = tk.IDs(p); err != nil {
			return nil, err
		}
		seen := make(map[int]bool)
		for _, id := range ids[i] {
			if inQuery[id] && !seen[id] {
				seen[id] = true
				df[id]++
			}
		}
	}
	weight := make(map[int]float64, len(df))
	for id, d := range df {
		weight[id] = math.Log(float64(len(passages)+1) / float64(d))
	}
	out := make([]string, len(passages))
	for i, p := range passages {
		if len(ids[i]) <= n {
			out[i] = p
			continue
		}
		start := bestWindow(ids[i], n, weight)
		out[i] = tk.Decode(ids[i][start : start+n])
	}
	return out, nil
}

// bestWindow returns the start of the n-token run of ids with the largest total weight, the
// earliest on ties. len(ids) > n > 0.
func bestWindow(ids []int, n int, weight map[int]float64) int {
	var sum float64
	for _, id := range ids[:n] {
		sum += weight[id]
	}
	best, bestSum := 0, sum
	for s := 1; s+n <= len(ids); s++ {
		sum += weight[ids[s+n-1]] - weight[ids[s-1]]
		// A small tolerance keeps float drift in the running sum from moving a tie.
		if sum > bestSum+1e-9 {
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
