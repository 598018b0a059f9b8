package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/mode"
)

// Guardrails are the flags of the runtime guardrails and the experiment (embedded in Config).
type Guardrails struct {
	DriftBaseline  string        `help:"Mode distribution drift is measured against: observed (each tenant's first --drift-reference of traffic, saved; a restart keeps it) or MODE=share pairs for every tenant (TASK=0.3,LEARNING=0.4,GENERAL=0.3; modes left out have 0). A tenant's admin sets its own at run time with PUT /v1/admin/drift/baseline." default:"observed"`
	DriftThreshold float64       `help:"KL divergence (nats) of the window from the baseline above which the mode distribution diverges; 0 trips on any divergence." default:"0.1"`
	DriftWindow    time.Duration `help:"Sliding window of turns whose mode distribution is compared with the baseline." default:"1h"`
	DriftHold      time.Duration `help:"How long the divergence must stay above --drift-threshold before classification falls back to GENERAL; 0 falls back at once." default:"1h"`
	DriftReference time.Duration `help:"Length of the reference period whose observed mode distribution becomes a tenant's baseline (with --drift-baseline observed)." default:"24h"`
	DriftMinTurns  int           `help:"Turns (at least 1) a drift window, or a reference period, needs to count." default:"50"`

	ErrorBaseline    string        `help:"Baseline error rate (share of thumbs-down feedback) a mode's is compared with: observed (every mode's over --error-reference) or a number in 0..1." default:"observed"`
	ErrorFactor      float64       `help:"A mode whose error rate exceeds this many times the baseline falls back to GENERAL (at least 1)." default:"2"`
	ErrorWindow      time.Duration `help:"Window of a mode's feedback for its error rate." default:"24h"`
	ErrorReference   time.Duration `help:"Window of every mode's feedback for the observed baseline." default:"168h"`
	ErrorMinFeedback int           `help:"Ratings (at least 1) a mode's window, and the reference, need before a mode can fall back." default:"20"`

	Experiment       string        `help:"The A/B experiment new conversations are assigned to at their first turn: budgets (treatment: the mode's budgets, control: GENERAL's; --control-ratio sets the split), recent-window (ablation of the recent window: all, last 3, last 1, no earlier turns) or off." default:"budgets" enum:"budgets,recent-window,off"`
	ExperimentBudget string        `help:"Treatment budgets in the budgets design: free (the mode's) or matched (the mode's, scaled to GENERAL's total)." default:"free" enum:"free,matched"`
	ExperimentBlock  int           `help:"Arms are assigned in blocks of this many new conversations per tenant, each block in the arms' exact shares (at least 1)." default:"20"`
	RollbackFactor   float64       `help:"The treatment is switched off when a treatment arm's error rate or mean latency exceeds this many times the control's (at least 1)." default:"2"`
	RollbackWindow   time.Duration `help:"Window of turns and feedback the rollback triggers compare." default:"24h"`
	RollbackMinRated int           `help:"Ratings (at least 1) each side needs before the error-rate trigger can fire; latency needs 50 turns." default:"30"`
}

// driftConfig is the drift monitor's configuration from the flags, with the baselines the store
// kept and saving to it.
func (c *Config) driftConfig(persisted map[string]mode.Baseline, save func(string, mode.Baseline) error) (mode.DriftConfig, error) {
	d := mode.DefaultDriftConfig()
	d.Window, d.Threshold, d.Hold, d.Reference, d.MinObservations = c.DriftWindow, c.DriftThreshold, c.DriftHold, c.DriftReference, c.DriftMinTurns
	d.Baselines, d.Save = persisted, save
	if c.DriftBaseline != "observed" {
		b, err := mode.ParseBaseline(c.DriftBaseline)
		if err != nil {
			return d, fmt.Errorf("--drift-baseline: %w; want observed, or MODE=share pairs such as TASK=0.3,LEARNING=0.4,GENERAL=0.3 (modes: %s)", err, modeNames())
		}
		d.Baselines = map[string]mode.Baseline{mode.Any: b} // the flag overrides what was saved
	}
	return d, nil
}

// modeNames lists the modes a baseline may name, for the error that shows the expected form.
func modeNames() string {
	names := make([]string, len(mode.Modes))
	for i, m := range mode.Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

func (c *Config) errorRateConfig() (mode.ErrorRateConfig, error) {
	e := mode.DefaultErrorRateConfig()
	e.Window, e.Reference, e.Factor, e.MinFeedback = c.ErrorWindow, c.ErrorReference, c.ErrorFactor, c.ErrorMinFeedback
	if c.ErrorBaseline != "observed" {
		v, err := strconv.ParseFloat(c.ErrorBaseline, 64)
		if err != nil {
			return e, fmt.Errorf("--error-baseline: %q is neither observed nor a number", c.ErrorBaseline)
		}
		e.Baseline, e.BaselineSet = v, true
	}
	return e, nil
}

func (c *Config) guardConfig() experiment.GuardConfig {
	g := experiment.DefaultGuardConfig()
	g.Window, g.Factor, g.MinFeedback = c.RollbackWindow, c.RollbackFactor, c.RollbackMinRated
	return g
}

func (c *Config) experimentConfig() experiment.Config {
	e := experiment.DefaultConfig()
	e.Design, e.ControlRatio, e.Budget, e.Block = experiment.Design(c.Experiment), c.ControlRatio, experiment.Budget(c.ExperimentBudget), c.ExperimentBlock
	return e
}

// guardrailFlags names the flags behind the monitors' fields.
var (
	driftFlags = map[string]string{"Window": "--drift-window", "Threshold": "--drift-threshold", "Hold": "--drift-hold",
		"Reference": "--drift-reference", "MinObservations": "--drift-min-turns", "Baselines": "--drift-baseline"}
	errorFlags = map[string]string{"Window": "--error-window", "Reference": "--error-reference", "Factor": "--error-factor",
		"MinFeedback": "--error-min-feedback", "Baseline": "--error-baseline"}
)

// validateGuardrails checks the guardrail flags, naming them.
func (c *Config) validateGuardrails() []error {
	var errs []error
	if d, err := c.driftConfig(nil, nil); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, flagErrors(d.Validate(), driftFlags, "drift")...)
	}
	if e, err := c.errorRateConfig(); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, flagErrors(e.Validate(), errorFlags, "error rate")...)
	}
	g := c.guardConfig()
	switch {
	case g.Factor < 1:
		errs = append(errs, fmt.Errorf("--rollback-factor must be at least 1, got %g", g.Factor))
	case g.Window <= 0:
		errs = append(errs, fmt.Errorf("--rollback-window must be positive, got %s", g.Window))
	case g.MinFeedback < 1:
		errs = append(errs, fmt.Errorf("--rollback-min-rated must be at least 1, got %d", g.MinFeedback))
	}
	return errs
}

// savedBaselines reads the drift baselines the store kept, by tenant. One that is no distribution
// (shares adding up past a float64, which PUT /v1/admin/drift/baseline once accepted) is left
// out with a warning: judged against, it made the tenant's divergence NaN and GET
// /v1/admin/drift a 500; refusing to start would take every tenant down for one's row, and
// scaling it would guess. The tenant observes a new reference period, whose baseline replaces
// the row, or its admin sets one.
func savedBaselines(raw map[uuid.UUID][]byte, logger *slog.Logger) (map[string]mode.Baseline, error) {
	persisted := map[string]mode.Baseline{}
	for tenant, b := range raw {
		var mb mode.Baseline
		if err := json.Unmarshal(b, &mb); err != nil {
			return nil, fmt.Errorf("reading the saved drift baseline of tenant %s: %w", tenant, err)
		}
		if err := mb.Validate(); err != nil {
			logger.Warn("saved drift baseline ignored: the tenant observes a new one", slog.String("tenant", tenant.String()),
				slog.String("error", err.Error()))
			continue
		}
		persisted[tenant.String()] = mb
	}
	return persisted, nil
}

// monitors builds the guardrails of a serving pipeline: drift (with the baselines the store
// kept, saving new ones there), low confidence, the feedback error rate (seeded with the
// feedback of its reference window, so a restart forgets nothing) and the experiment's guard.
func (a *app) monitors(ctx context.Context) (ask.Monitors, error) {
	all := ragd.AllTenants(ctx) // maintenance: every tenant's saved state
	raw, err := a.store.ModeBaselines(all)
	if err != nil {
		return ask.Monitors{}, err
	}
	persisted, err := savedBaselines(raw, a.logger)
	if err != nil {
		return ask.Monitors{}, err
	}
	// A tenant's observed or set baseline is saved as that tenant's row; a baseline for every
	// tenant (mode.Any) is --drift-baseline's, not saved.
	save := func(tenant string, b mode.Baseline) error {
		id, err := uuid.Parse(tenant)
		if err != nil {
			return fmt.Errorf("a drift baseline for %q is not a tenant's: set it with --drift-baseline", tenant)
		}
		raw, err := json.Marshal(b)
		if err != nil {
			return err
		}
		return a.store.SaveModeBaseline(ragd.WithPrincipal(context.WithoutCancel(ctx), ragd.Principal{Tenant: id, Role: ragd.RoleAdmin}), raw)
	}
	dc, err := a.cfg.driftConfig(persisted, save)
	if err != nil {
		return ask.Monitors{}, err
	}
	dc.Logger = a.logger
	var m ask.Monitors
	if m.Drift, err = mode.NewDrift(dc); err != nil {
		return m, err
	}
	lc := mode.DefaultLowConfidenceConfig()
	lc.Threshold, lc.Logger = a.cfg.ModeThreshold, a.logger
	if m.LowConfidence, err = mode.NewLowConfidence(lc); err != nil {
		return m, err
	}
	ec, err := a.cfg.errorRateConfig()
	if err != nil {
		return m, err
	}
	ec.Logger = a.logger
	if m.ErrorRate, err = mode.NewErrorRate(ec); err != nil {
		return m, err
	}
	// The store lists feedback in the order it was first given; the windows expire in the order
	// ratings were last given (a changed rating moves), so they are fed in that order.
	var rated []ragd.Feedback
	err = a.store.Feedback(all, ragd.FeedbackFilter{From: time.Now().Add(-ec.Reference)}, func(f ragd.Feedback) error {
		rated = append(rated, f)
		return nil
	})
	if err != nil {
		return m, err
	}
	slices.SortStableFunc(rated, func(x, y ragd.Feedback) int { return x.UpdatedAt.Compare(y.UpdatedAt) })
	for _, f := range rated {
		m.ErrorRate.ObserveAt(f.Tenant.String(), mode.Mode(f.Mode), f.Rating == ragd.RatingDown, f.UpdatedAt)
	}
	n := len(rated)
	gc := a.cfg.guardConfig()
	gc.Logger = a.logger
	if m.Experiment, err = experiment.NewGuard(a.cfg.experimentConfig(), gc); err != nil {
		return m, err
	}
	a.logger.Info("guardrails", slog.Int("saved_drift_baselines", len(persisted)), slog.String("drift_baseline", a.cfg.DriftBaseline),
		slog.Int("feedback_read", n), slog.String("experiment", a.cfg.Experiment))
	return m, nil
}
