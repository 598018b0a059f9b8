package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/mode"
)

type evalCompactionCmd struct {
	File      string `arg:"" help:"MultiWOZ 2.1 dialogues (the original format, e.g. ../shared/data/multiwoz/val.json)." type:"existingfile"`
	Window    int    `help:"Messages the sliding-window strategy keeps." default:"6"`
	Budget    string `help:"Token budget of the token-budget strategy: a number of tokens, or 'matched' for the sliding window's matched token size." default:"matched"`
	NoIntent  bool   `help:"Replay without the turn-intent classifier (goal boundaries from the message alone)." name:"no-intent"`
	JSON      string `help:"Write the JSON report here ('-' for stdout, and no table). Default: <data-dir>/eval/compaction.json, with the plot beside it." name:"json"`
	Dialogues int    `help:"Replay only the first N dialogues, by id (0 = all)."`
}

// Run replays MultiWOZ dialogues through each compaction strategy with the context code of
// /v1/ask and reports token reduction, retention, goal-boundary accuracy and cost.
func (c evalCompactionCmd) Run(a *app) error {
	ds, err := eval.LoadMultiWOZ(c.File)
	if err != nil {
		return err
	}
	if c.Dialogues < 0 {
		return fmt.Errorf("--dialogues must not be negative, got %d", c.Dialogues)
	}
	if c.Dialogues > 0 {
		ds = ds[:min(c.Dialogues, len(ds))]
	}
	cc := a.cfg.askConfig().Compact
	cc.WindowMessages = c.Window
	cfg := eval.CompactionConfig{Compact: cc, Budgets: bundle.Budgets(mode.BudgetsFor(mode.General))}
	switch c.Budget {
	case "matched":
		cfg.BudgetMatched = true
	default:
		n, err := strconv.Atoi(c.Budget)
		if err != nil || n < 1 {
			return fmt.Errorf("--budget %q: want a number of tokens (at least 1) or 'matched'", c.Budget)
		}
		cfg.Compact.BudgetTokens = n
	}
	if err := cfg.Compact.Validate(); err != nil {
		return fmt.Errorf("--window/--budget: %w", err)
	}
	if !c.NoIntent {
		cfg.Intent = turnIntent{}
	}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		bar := progressbar.NewOptions(len(ds), progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("deciding turns"), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("dialogues"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		defer bar.Finish()
		cfg.Progress = func() { bar.Add(1) }
	}
	rep, err := eval.ReplayCompaction(filepath.Base(c.File), ds, cfg)
	if err != nil {
		return err
	}
	if !cfg.BudgetMatched {
		rep.Notes = append(rep.Notes, fmt.Sprintf("token-budget's budget: %d tokens (--budget)", cfg.Compact.BudgetTokens))
	}
	if c.NoIntent {
		rep.Notes = append(rep.Notes, "replayed without the turn-intent classifier (--no-intent)")
	}
	path := c.JSON
	if path == "" {
		path = filepath.Join(a.cfg.DataDir, "eval", "compaction.json")
	}
	if path == "-" {
		return rep.WriteJSON(os.Stdout)
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	plot := path[:len(path)-len(filepath.Ext(path))] + ".png"
	if err := rep.WritePlot(plot); err != nil {
		return err
	}
	fmt.Printf("plot: %s\n", plot)
	return writeJSON(rep, path)
}
