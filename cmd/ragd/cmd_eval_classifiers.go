package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
)

type evalClassifiersCmd struct {
	Modes      string `help:"Labelled interaction modes (JSON Lines as ../shared/data/labels/modes_*.jsonl)." type:"existingfile"`
	Intents    string `help:"Labelled turn intents (JSON Lines as ../shared/data/labels/intent_*.jsonl)." type:"existingfile"`
	Invariants string `help:"Labelled sticky invariants (JSON Lines as ../shared/data/labels/invariants_*.jsonl)." type:"existingfile"`
}

// Run evaluates the shipped (embedded) classifiers on labelled files, with the settings ragd
// runs with (--mode-threshold), and times them per turn.
func (c evalClassifiersCmd) Run(a *app) error {
	if c.Modes == "" && c.Intents == "" && c.Invariants == "" {
		return errors.New("give at least one of --modes, --intents, --invariants")
	}
	return evalClassifiers(os.Stdout, c, a.cfg.askConfig().Mode, a.cfg.askConfig().IntentThreshold)
}

func evalClassifiers(w io.Writer, c evalClassifiersCmd, modeCfg mode.Config, intentThreshold float64) error {
	var cost []costRow
	if c.Modes != "" {
		rows, err := mode.LoadExamples(c.Modes)
		if err != nil {
			return err
		}
		raw, fallback, err := mode.Evaluate(mode.Shipped(), rows, modeCfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "mode: %s (%d turns), the shipped model, each turn with its previous user turn\n\nraw (most probable mode):\n", c.Modes, len(rows))
		if err := raw.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nwith the fallback (confidence < %.2f counts as GENERAL):\n", modeCfg.Threshold)
		if err := fallback.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
		cost = append(cost, timeEach("mode", len(rows), func(i int) { mode.Classify(rows[i].Text, rows[i].Prev) }))
	}
	if c.Intents != "" {
		rows, err := intent.LoadExamples(c.Intents)
		if err != nil {
			return err
		}
		raw, fallback, err := intent.Evaluate(rows, intentThreshold)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "intent: %s (%d turns), the shipped model, each turn with its history\n\nraw (most probable intent):\n", c.Intents, len(rows))
		if err := raw.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nas ragd serve uses it: the new-topic guard, and confidence < %.2f counts as drill-down:\n", intentThreshold)
		if err := fallback.WriteText(w); err != nil {
			return err
		}
		rawNT, pipeNT := intent.EvaluateNewTopic(rows, intentThreshold)
		fmt.Fprintln(w, "\nfalse new-topic rate (other turns called new-topic, each dropping every carried source; 95% intervals resample conversations):")
		if err := intent.WriteScores(w, []string{"raw", "as served"}, []intent.Score{rawNT, pipeNT}); err != nil {
			return err
		}
		fmt.Fprintln(w)
		cost = append(cost, timeEach("intent", len(rows), func(i int) {
			intent.Classify(intent.Turn{Text: rows[i].Text, History: rows[i].History})
		}))
	}
	if c.Invariants != "" {
		rows, err := invariant.LoadExamples(c.Invariants)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "sticky invariants: %s (%d messages), span rule: same type and character IoU >= %.2f\n\n", c.Invariants, len(rows), invariant.MinIoU)
		if err := invariant.Evaluate(rows, invariant.Detect).WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
		cost = append(cost, timeEach("invariants", len(rows), func(i int) { invariant.Detect(rows[i].Text) }))
	}
	fmt.Fprintln(w, "cost per turn (wall time, one core, each file's turns run 5 times):")
	var total time.Duration
	for _, r := range cost {
		fmt.Fprintf(w, "  %-10s p50 %8s  p90 %8s\n", r.name, r.p50, r.p90)
		total += r.p50
	}
	fmt.Fprintf(w, "  %-10s p50 %8s (the sum of the p50s above)\n", "together", total)
	return nil
}

type costRow struct {
	name     string
	p50, p90 time.Duration
}

// timeEach times fn on items 0..n-1, five rounds, and returns the percentiles of the times.
func timeEach(name string, n int, fn func(i int)) costRow {
	var ds []time.Duration
	for range 5 {
		for i := range n {
			t := time.Now()
			fn(i)
			ds = append(ds, time.Since(t))
		}
	}
	slices.Sort(ds)
	if len(ds) == 0 {
		return costRow{name: name}
	}
	return costRow{name: name, p50: ds[len(ds)/2].Round(time.Microsecond / 10), p90: ds[len(ds)*9/10].Round(time.Microsecond / 10)}
}
