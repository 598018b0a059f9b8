package invariant

import (
	"math/rand/v2"
	"slices"

	"github.com/ragd/ragd/classify"
)

// Stability is how much the detector's decisions depend on which messages it was trained on.
type Stability struct {
	// Clauses is how many clauses the messages have; Flips how many of them are decided
	// differently (the type of the span that overlaps the clause most, or none) by at least two
	// of the models; Messages how many messages get different spans from at least two.
	Clauses, Flips, Messages int
}

// MeasureStability trains the models `models` times on exs, each time without a different
// `leaveOut` of the messages (disjoint, in an order drawn from seed), runs Detect with each on
// every message, and counts what they decide differently. Decisions that move when a few
// unrelated messages are left out are decisions unseen turns will get at random: the count is
// the models' variance, which cross-validation's mean does not show.
func MeasureStability(exs []Example, opts classify.Options, debugging func(string) float64, models, leaveOut int, seed uint64) (Stability, error) {
	perm := rand.New(rand.NewPCG(seed, 2)).Perm(len(exs))
	decided := make([][][]Type, len(exs)) // message, model, clause
	first := make([][]Span, len(exs))
	differs := make([]bool, len(exs))
	var st Stability
	for j := range models {
		out := map[int]bool{}
		for _, i := range perm[min(j*leaveOut, len(exs)):min((j+1)*leaveOut, len(exs))] {
			out[i] = true
		}
		var train []Example
		for i, ex := range exs {
			if !out[i] {
				train = append(train, ex)
			}
		}
		m, err := Train(train, opts, debugging)
		if err != nil {
			return Stability{}, err
		}
		for i, ex := range exs {
			got := m.Detect(ex.Text, debugging(ex.Text))
			decided[i] = append(decided[i], clauseTypes(ex.Text, got))
			if j == 0 {
				first[i] = got
			} else if !slices.Equal(first[i], got) {
				differs[i] = true
			}
		}
	}
	for i, ms := range decided {
		if differs[i] {
			st.Messages++
		}
		for c := range ms[0] {
			st.Clauses++
			for _, m := range ms[1:] {
				if m[c] != ms[0][c] {
					st.Flips++
					break
				}
			}
		}
	}
	return st, nil
}

// clauseTypes is the type of the span that overlaps each clause of msg most ("" for none).
func clauseTypes(msg string, spans []Span) []Type {
	var out []Type
	for _, c := range clauses(msg) {
		var t Type
		most := 0
		for _, s := range spans {
			if ov := min(c.End, s.End) - max(c.Start, s.Start); ov > most {
				t, most = s.Type, ov
			}
		}
		out = append(out, t)
	}
	return out
}
