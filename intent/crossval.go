package intent

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/ragd/ragd/classify"
)

// ExtraFile is where the generated training rows live, relative to this package's directory:
// `ragd-train -task intent-data` writes it from the public conversations in ../shared/data.
const ExtraFile = "data/intent_extra.jsonl"

// GroupedCV runs k-fold cross-validation over labelled and extra rows together, folds grouped
// by conversation (a conversation's hand-labelled and generated rows share a fold) and
// stratified by intent. Each fold's model trains on the other folds' labelled rows, and on
// their extra rows too when withExtra is set, so that the same folds score a model with and
// without the extra data. It returns the out-of-fold predictions of labelled then extra rows.
func GroupedCV(labelled, extra []Example, withExtra bool, k int, opts classify.Options) ([]classify.Prediction, error) {
	train := func(_ int, idx []int) []int {
		if withExtra {
			return idx
		}
		return slices.DeleteFunc(idx, func(i int) bool { return i >= len(labelled) })
	}
	return classify.CrossValidateWith(trainingSet(append(slices.Clip(labelled), extra...)), k, opts, train, nil)
}

// Guarded returns the labels the pipeline would use for out-of-fold predictions: the first turn
// new-topic, every other through Guard.
func Guarded(rows []Example, preds []classify.Prediction) []Label {
	out := make([]Label, len(rows))
	for i, r := range rows {
		if len(r.History) == 0 {
			out[i] = NewTopic
			continue
		}
		probs := map[Label]float64{}
		for j, l := range preds[i].Labels {
			probs[Label(l)] = preds[i].Probs[j]
		}
		res, _ := Guard(Turn{Text: r.Text, History: r.History}, probs)
		out[i] = res.Label
	}
	return out
}

// Rate is a share with its 95% interval.
type Rate struct {
	K, N   int
	Lo, Hi float64
}

// Value is K/N, 0 without items.
func (r Rate) Value() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.K) / float64(r.N)
}

func (r Rate) String() string {
	return fmt.Sprintf("%.3f [%.3f, %.3f] (%d/%d)", r.Value(), r.Lo, r.Hi, r.K, r.N)
}

// Score is how predicted intents fare against the gold ones.
type Score struct {
	// Accuracy is the share of rows predicted right.
	Accuracy Rate
	// FalseNewTopic is the share of rows that are not new-topic predicted new-topic: each drops
	// every carried source for nothing.
	FalseNewTopic Rate
	// NewTopicRecall is the share of new-topic rows predicted new-topic.
	NewTopicRecall Rate
}

// ScoreLabels scores predicted labels against the rows' gold labels. Intervals are percentile
// bootstraps that resample conversations, not rows, since the turns of one conversation are
// not independent.
func ScoreLabels(rows []Example, pred []Label) Score {
	groups := make([]string, len(rows))
	for i, r := range rows {
		groups[i] = group(r)
	}
	rate := func(in func(i int) bool, hit func(i int) bool) Rate {
		var r Rate
		count := func(idx []int) (k, n int) {
			for _, i := range idx {
				if in(i) {
					n++
					if hit(i) {
						k++
					}
				}
			}
			return k, n
		}
		all := make([]int, len(rows))
		for i := range all {
			all[i] = i
		}
		r.K, r.N = count(all)
		r.Lo, r.Hi = groupBootstrap(groups, func(idx []int) float64 {
			k, n := count(idx)
			if n == 0 {
				return 0
			}
			return float64(k) / float64(n)
		})
		return r
	}
	any := func(int) bool { return true }
	return Score{
		Accuracy:       rate(any, func(i int) bool { return pred[i] == rows[i].Intent }),
		FalseNewTopic:  rate(func(i int) bool { return rows[i].Intent != NewTopic }, func(i int) bool { return pred[i] == NewTopic }),
		NewTopicRecall: rate(func(i int) bool { return rows[i].Intent == NewTopic }, func(i int) bool { return pred[i] == NewTopic }),
	}
}

// groupBootstrap returns the 95% percentile bootstrap interval of stat, resampling groups (an
// empty group is an item of its own) rather than items.
func groupBootstrap(groups []string, stat func(idx []int) float64) (lo, hi float64) {
	var members [][]int
	byKey := map[string]int{}
	for i, g := range groups {
		j, ok := byKey[g]
		if g == "" || !ok {
			j = len(members)
			members = append(members, nil)
			if g != "" {
				byKey[g] = j
			}
		}
		members[j] = append(members[j], i)
	}
	var items []int
	ci := classify.Bootstrap(len(members), func(sample []int) float64 {
		items = items[:0]
		for _, g := range sample {
			items = append(items, members[g]...)
		}
		return stat(items)
	})
	return ci.Lo, ci.Hi
}

// WriteScores writes scores as a table, one line per name, in the given order.
func WriteScores(w io.Writer, names []string, scores []Score) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\taccuracy [95%]\tfalse new-topic [95%]\tnew-topic recall [95%]\t")
	for i, s := range scores {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", names[i], s.Accuracy, s.FalseNewTopic, s.NewTopicRecall)
	}
	return tw.Flush()
}
