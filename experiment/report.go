package experiment

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/classify"
)

// Effect is the smallest effect the experiment is sized for: a 10% relative change of the
// control's completion rate (the product document's), found at a two-sided 5% level with 80%
// power.
const (
	Effect = 0.10
	zAlpha = 1.959963984540054  // two-sided 5%
	zBeta  = 0.8416212335729143 // 80% power
)

// ArmFigures are one arm's figures in a stratum.
type ArmFigures struct {
	Arm           string  `json:"arm"`
	Turns         int     `json:"turns"`
	Conversations int     `json:"conversations"`
	ContextTokens float64 `json:"context_tokens_mean"`
	LatencyMS     float64 `json:"latency_ms_mean"`
	Rated         int     `json:"rated"`
	// FeedbackRate is the share of turns rated; CompletionRate the share of rated turns rated
	// up (the user's "that worked"); ErrorRate the share rated down. Each with its Wilson 95%
	// interval.
	FeedbackRate     float64           `json:"feedback_rate"`
	CompletionRate   float64           `json:"completion_rate"`
	CompletionCI     classify.Interval `json:"completion_ci"`
	ErrorRate        float64           `json:"error_rate"`
	ErrorCI          classify.Interval `json:"error_ci"`
	up, down         int
	contextTokensSum int64
	latencySum       int64
}

// Comparison is an arm against the control in one stratum: a two-proportion z-test of their
// completion rates.
type Comparison struct {
	Arm string `json:"arm"`
	// Diff is the arm's completion rate minus the control's, with its 95% interval (unpooled
	// standard error); Z and P are the pooled test's statistic and two-sided p-value.
	Diff float64           `json:"diff"`
	CI   classify.Interval `json:"diff_ci"`
	Z    float64           `json:"z"`
	P    float64           `json:"p"`
	// NeededPerArm is the rated turns each arm needs to find Effect (a 10% relative change of
	// the control's rate) at 80% power; StillNeeded what the smaller arm lacks of it. Both 0
	// when the control has no rate to size from.
	NeededPerArm int `json:"needed_per_arm"`
	StillNeeded  int `json:"still_needed"`
}

// Stratum is one mode stratum of a report ("all" pools them).
type Stratum struct {
	Mode        string       `json:"mode"`
	Arms        []ArmFigures `json:"arms"`
	Comparisons []Comparison `json:"comparisons"`
}

// Report is the experiment's state.
type Report struct {
	Design  Design    `json:"design"`
	Budget  Budget    `json:"budget,omitempty"`
	Control string    `json:"control"`
	Strata  []Stratum `json:"strata"`
}

// NewReport computes the report of an experiment from its per arm and mode figures. Strata are
// the modes in the order given by modes, then "all"; arms are the design's, control first, and
// rows of arms the design does not have (conversations from before it started) are left out.
func NewReport(cfg Config, rows []ragd.ArmStratum, modes []string) Report {
	r := Report{Design: cfg.Design, Control: cfg.ControlArm()}
	if cfg.Design == Budgets {
		r.Budget = cfg.Budget
	}
	arms := cfg.Arms()
	for _, m := range append(slices.Clone(modes), "all") {
		st := Stratum{Mode: m, Arms: []ArmFigures{}, Comparisons: []Comparison{}}
		for _, arm := range arms {
			a := ArmFigures{Arm: arm}
			for _, row := range rows {
				if row.Arm != arm || (m != "all" && row.Mode != m) {
					continue
				}
				a.Turns += row.Turns
				a.Conversations += row.Conversations
				a.Rated += row.Rated
				a.up += row.Up
				a.down += row.Down
				a.contextTokensSum += row.ContextTokens
				a.latencySum += row.LatencyMS
			}
			a.finish()
			st.Arms = append(st.Arms, a)
		}
		if len(st.Arms) > 0 {
			for _, a := range st.Arms[1:] {
				st.Comparisons = append(st.Comparisons, compare(st.Arms[0], a))
			}
		}
		r.Strata = append(r.Strata, st)
	}
	return r
}

// finish turns an arm's counts into rates. Conversations in "all" count each once per stratum
// they have turns in, so the pooled figure is a sum over strata.
func (a *ArmFigures) finish() {
	if a.Turns > 0 {
		a.ContextTokens = float64(a.contextTokensSum) / float64(a.Turns)
		a.LatencyMS = float64(a.latencySum) / float64(a.Turns)
		a.FeedbackRate = float64(a.Rated) / float64(a.Turns)
	}
	if a.Rated > 0 {
		a.CompletionRate = float64(a.up) / float64(a.Rated)
		a.ErrorRate = float64(a.down) / float64(a.Rated)
	}
	a.CompletionCI, a.ErrorCI = classify.Wilson(a.up, a.Rated), classify.Wilson(a.down, a.Rated)
}

// compare is the two-proportion z-test of b's completion rate against the control a's.
func compare(a, b ArmFigures) Comparison {
	c := Comparison{Arm: b.Arm, Diff: b.CompletionRate - a.CompletionRate}
	n1, n2 := float64(a.Rated), float64(b.Rated)
	if n1 > 0 && n2 > 0 {
		p1, p2 := a.CompletionRate, b.CompletionRate
		se := math.Sqrt(p1*(1-p1)/n1 + p2*(1-p2)/n2)
		c.CI = classify.Interval{Lo: c.Diff - zAlpha*se, Hi: c.Diff + zAlpha*se}
		pool := float64(a.up+b.up) / (n1 + n2)
		if sp := math.Sqrt(pool * (1 - pool) * (1/n1 + 1/n2)); sp > 0 {
			c.Z = c.Diff / sp
			c.P = math.Erfc(math.Abs(c.Z) / math.Sqrt2)
		} else {
			c.P = 1
		}
	} else {
		c.CI, c.P = classify.Interval{Lo: -1, Hi: 1}, 1
	}
	if n1 > 0 && a.CompletionRate > 0 && a.CompletionRate < 1 {
		c.NeededPerArm = SampleSize(a.CompletionRate, min(1, a.CompletionRate*(1+Effect)))
		c.StillNeeded = max(0, c.NeededPerArm-min(a.Rated, b.Rated))
	}
	return c
}

// SampleSize is the number per arm a two-sided two-proportion z-test at 5% needs to find p2
// against p1 with 80% power: (zα·√(2p̄q̄) + zβ·√(p1q1 + p2q2))² / (p1 − p2)², rounded up.
func SampleSize(p1, p2 float64) int {
	if p1 == p2 {
		return 0
	}
	pbar := (p1 + p2) / 2
	num := zAlpha*math.Sqrt(2*pbar*(1-pbar)) + zBeta*math.Sqrt(p1*(1-p1)+p2*(1-p2))
	return int(math.Ceil(num * num / ((p1 - p2) * (p1 - p2))))
}

// WriteText writes the report as one table per stratum.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "experiment: %s", r.Design)
	if r.Budget != "" {
		fmt.Fprintf(w, " (treatment budgets: %s)", r.Budget)
	}
	fmt.Fprintf(w, "; control arm %s; completion = rated up / rated, error = rated down / rated\n", r.Control)
	for _, st := range r.Strata {
		fmt.Fprintf(w, "\nstratum %s\n", st.Mode)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "arm\tturns\tconversations\tcontext tokens\tlatency ms\trated\tfeedback\tcompletion\tcompletion 95%\terror\terror 95%\t")
		for _, a := range st.Arms {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%d\t%.3f\t%.3f\t%s\t%.3f\t%s\t\n", a.Arm, a.Turns, a.Conversations,
				a.ContextTokens, a.LatencyMS, a.Rated, a.FeedbackRate, a.CompletionRate, a.CompletionCI, a.ErrorRate, a.ErrorCI)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, c := range st.Comparisons {
			fmt.Fprintf(w, "  %s vs %s: completion diff %+.3f (95%% %+.3f to %+.3f), z %.2f, p %.3g; ",
				c.Arm, r.Control, c.Diff, c.CI.Lo, c.CI.Hi, c.Z, c.P)
			if c.NeededPerArm == 0 {
				// Not "0 still needed": nothing is known of the sample size yet.
				fmt.Fprintf(w, "the rated turns a %.0f%% change needs are unknown until the control's completion rate is above 0 and below 1\n", Effect*100)
				continue
			}
			fmt.Fprintf(w, "%d rated per arm find a %.0f%% change at 80%% power, %d still needed\n", c.NeededPerArm, Effect*100, c.StillNeeded)
		}
	}
	return nil
}
