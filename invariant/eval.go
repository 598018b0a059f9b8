package invariant

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ragd/ragd/classify"
)

// Example is one labelled message of invariants_*.jsonl (../shared/data/labels/README.md §2).
// Label offsets are bytes into Text once read: the files count code points.
type Example struct {
	ID     string  `json:"id"`
	Text   string  `json:"text"`
	Labels []Label `json:"labels"`
	Source string  `json:"source"`
}

// Label is one gold span.
type Label struct {
	Type  Type   `json:"type"`
	Span  string `json:"span"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// LoadExamples reads a JSON Lines file of labelled messages, turning the code point offsets
// of the files into byte offsets and checking that every span is the text it says.
func LoadExamples(path string) ([]Example, error) {
	rows, err := classify.LoadJSONL[Example](path)
	if err != nil {
		return nil, fmt.Errorf("invariant: %w", err)
	}
	for i := range rows {
		at := byteOffsets(rows[i].Text)
		for j, l := range rows[i].Labels {
			if l.Start < 0 || l.End < l.Start || l.End >= len(at) || rows[i].Text[at[l.Start]:at[l.End]] != l.Span {
				return nil, fmt.Errorf("invariant: %s: %s: span %d..%d is not %q", path, rows[i].ID, l.Start, l.End, l.Span)
			}
			rows[i].Labels[j].Start, rows[i].Labels[j].End = at[l.Start], at[l.End]
		}
	}
	return rows, nil
}

// byteOffsets maps the code point offsets of s to byte offsets, len(s) included.
func byteOffsets(s string) []int {
	at := make([]int, 0, len(s)+1)
	for i := range s {
		at = append(at, i)
	}
	return append(at, len(s))
}

// MinIoU is the project's span rule: a predicted span matches a gold span of the same type
// when their character intersection over union is at least MinIoU. The labels' README asks
// for overlap rather than exact boundaries, which are a judgement call; 0.3 accepts a clause
// for the sentence around it.
const MinIoU = 0.3

func iou(a, b segment) float64 {
	inter := min(a.End, b.End) - max(a.Start, b.Start)
	if inter <= 0 {
		return 0
	}
	return float64(inter) / float64(max(a.End, b.End)-min(a.Start, b.Start))
}

// Counts are the tallies of one row of a Report: spans predicted, predicted that match a gold
// span, gold, gold that a prediction matches; and messages that have the row's type in both
// the prediction and the gold (TP), in the prediction only (FP), in the gold only (FN).
type Counts struct {
	Pred, PredOK, Gold, GoldOK int
	TP, FP, FN                 int
}

// Precision and Recall are the span figures, with their Wilson 95% intervals.
func (c Counts) Precision() (float64, classify.Interval) { return ratio(c.PredOK, c.Pred) }
func (c Counts) Recall() (float64, classify.Interval)    { return ratio(c.GoldOK, c.Gold) }

func ratio(k, n int) (float64, classify.Interval) {
	if n == 0 {
		return 0, classify.Wilson(0, 0)
	}
	return float64(k) / float64(n), classify.Wilson(k, n)
}

// Report is the span table of a detector on labelled messages.
type Report struct {
	// Types holds one row per type, in the order of Types.
	Types map[Type]*Counts
	// Sticky is the "sticky or not" row: a span matches a gold span of any type, since a span
	// kept under the wrong type is still kept in every bundle.
	Sticky Counts
	// Rules is the row of the rules a conversation keeps until it ends, safety requirements and
	// hard constraints: a span of either type matches a gold span of either type. A rule found
	// as a blocking error can be resolved by a later "that works", and as a correction replaced
	// by the next one (see Sticky), so the sticky row overstates what stays.
	Rules Counts
	// Micro pools the typed rows: every span must match one of its own type.
	Micro Counts
	// Messages is the number of messages, Empty those with no gold span and FalseAlarms those
	// of them with a predicted span.
	Messages, Empty, FalseAlarms int
}

// Evaluate runs detect on every example and scores its spans by the span rule.
func Evaluate(exs []Example, detect func(string) []Span) Report {
	r := newReport()
	for _, ex := range exs {
		r.add(ex, detect(ex.Text))
	}
	return r
}

// EvaluateByID scores spans already found, such as cross-validation's, given by example ID.
func EvaluateByID(exs []Example, spans map[string][]Span) Report {
	r := newReport()
	for _, ex := range exs {
		r.add(ex, spans[ex.ID])
	}
	return r
}

// evaluateSpans scores spans[i] as the spans of exs[i].
func evaluateSpans(exs []Example, spans [][]Span) Report {
	r := newReport()
	for i, ex := range exs {
		r.add(ex, spans[i])
	}
	return r
}

func newReport() Report {
	r := Report{Types: map[Type]*Counts{}}
	for _, t := range Types {
		r.Types[t] = &Counts{}
	}
	return r
}

func (r *Report) add(ex Example, pred []Span) {
	r.Messages++
	if len(ex.Labels) == 0 {
		r.Empty++
		if len(pred) > 0 {
			r.FalseAlarms++
		}
	}
	match := func(p Span, g Label, typed bool) bool {
		return (!typed || p.Type == g.Type) && iou(segment{p.Start, p.End}, segment{g.Start, g.End}) >= MinIoU
	}
	tally := func(c *Counts, keep func(Type) bool, typed bool) {
		var inPred, inGold bool
		for _, p := range pred {
			if !keep(p.Type) {
				continue
			}
			inPred = true
			c.Pred++
			for _, g := range ex.Labels {
				if keep(g.Type) && match(p, g, typed) {
					c.PredOK++
					break
				}
			}
		}
		for _, g := range ex.Labels {
			if !keep(g.Type) {
				continue
			}
			inGold = true
			c.Gold++
			for _, p := range pred {
				if keep(p.Type) && match(p, g, typed) {
					c.GoldOK++
					break
				}
			}
		}
		switch {
		case inPred && inGold:
			c.TP++
		case inPred:
			c.FP++
		case inGold:
			c.FN++
		}
	}
	for _, t := range Types {
		tally(r.Types[t], func(x Type) bool { return x == t }, true)
	}
	tally(&r.Rules, func(x Type) bool { return x == Safety || x == Constraint }, false)
	all := func(Type) bool { return true }
	tally(&r.Micro, all, true)
	tally(&r.Sticky, all, false)
}

// WriteText writes the report as a table: per row its span precision and recall (in 0..1, in
// that order right after the row's name, so scripts can read them), span counts, the Wilson
// 95% intervals, and the message-level precision and recall of the row's type.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tprecision\trecall\tpredicted\tmatched\tgold\tfound\tprecision 95%\trecall 95%\tmsg P\tmsg R\t")
	row := func(name string, c Counts) {
		p, pci := c.Precision()
		rc, rci := c.Recall()
		mp, _ := ratio(c.TP, c.TP+c.FP)
		mr, _ := ratio(c.TP, c.TP+c.FN)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%s\t%s\t%.3f\t%.3f\t\n", name, p, rc, c.Pred, c.PredOK, c.Gold, c.GoldOK, pci, rci, mp, mr)
	}
	for _, t := range Types {
		row(string(t), *r.Types[t])
	}
	row("rules (safety or hard)", r.Rules)
	row("all (micro)", r.Micro)
	row("sticky (any type)", r.Sticky)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "messages %d; without any invariant %d, of which %d got a span\n", r.Messages, r.Empty, r.FalseAlarms)
	return err
}
