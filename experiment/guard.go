package experiment

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"sync"
	"time"
)

// GuardConfig configures a Guard. DefaultGuardConfig gives the product's values; every field
// means what it says, zero included.
type GuardConfig struct {
	// Window is how far back turns and feedback count.
	Window time.Duration
	// Factor is how many times the control's error rate or mean latency a treatment arm must
	// exceed to be rolled back.
	Factor float64
	// MinFeedback is how many rated turns each side needs before the error rate can trigger;
	// MinTurns how many turns before latency can.
	MinFeedback int
	MinTurns    int
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alert (default slog.Default()).
	Logger *slog.Logger
}

// DefaultGuardConfig returns the product's values: over the last day, a treatment arm whose
// error rate (at least 30 ratings each side) or mean latency (at least 50 turns) is more than
// twice the control's is rolled back.
func DefaultGuardConfig() GuardConfig {
	return GuardConfig{Window: 24 * time.Hour, Factor: 2, MinFeedback: 30, MinTurns: 50}
}

// Validate checks the settings.
func (c GuardConfig) Validate() error {
	var errs []error
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("Window: must be positive, got %s", c.Window))
	}
	if c.Factor < 1 || math.IsNaN(c.Factor) {
		errs = append(errs, fmt.Errorf("Factor: must be at least 1, got %g", c.Factor))
	}
	if c.MinFeedback < 1 || c.MinTurns < 1 {
		errs = append(errs, errors.New("MinFeedback and MinTurns must be at least 1"))
	}
	return errors.Join(errs...)
}

// The rollback triggers.
const (
	TriggerErrorRate = "error-rate"
	TriggerLatency   = "latency"
)

// Guard watches the experiment for harm: when a treatment arm's error rate or latency runs
// above Factor times the control's, it switches the treatment off (every conversation is then
// served as the control is, arms still recorded for the analysis), logs an alert and counts the
// rollback by trigger. It stays off until Enable. It is safe for concurrent use.
type Guard struct {
	cfg     GuardConfig
	control string

	mu        sync.Mutex
	arms      map[string]*armWindow
	off       bool
	trigger   string
	rollbacks map[string]int
}

type armWindow struct {
	latency samples[time.Duration]
	rated   samples[bool] // bad or not
}

// samples is a time-ordered window of values.
type samples[T any] struct {
	at []time.Time
	v  []T
}

func (s *samples[T]) add(t time.Time, v T) { s.at, s.v = append(s.at, t), append(s.v, v) }

func (s *samples[T]) expire(cutoff time.Time) {
	i := 0
	for i < len(s.at) && !s.at[i].After(cutoff) {
		i++
	}
	s.at, s.v = s.at[i:], s.v[i:]
}

// NewGuard returns a guard of the experiment cfg describes.
func NewGuard(exp Config, cfg GuardConfig) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("experiment: guard: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Guard{cfg: cfg, control: exp.ControlArm(), arms: map[string]*armWindow{}, rollbacks: map[string]int{}}, nil
}

// Enabled reports whether treatment arms get their treatment.
func (g *Guard) Enabled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.off
}

// Enable switches the treatment back on after a rollback (an operator's decision, once the
// cause is dealt with): the windows start empty, so the evidence of the harm that was fixed does
// not trip it again.
func (g *Guard) Enable() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		g.cfg.Logger.Info("experiment treatment switched back on", slog.String("after", g.trigger))
	}
	g.off, g.trigger = false, ""
	clear(g.arms)
}

// Turn records one turn's latency in its arm.
func (g *Guard) Turn(arm string, latency time.Duration) {
	g.observe(arm, func(w *armWindow, now time.Time) { w.latency.add(now, latency) })
}

// Feedback records one rating of a turn of arm, bad for a thumbs-down.
func (g *Guard) Feedback(arm string, bad bool) {
	g.observe(arm, func(w *armWindow, now time.Time) { w.rated.add(now, bad) })
}

// Revise records that a rating of a turn of arm was changed to bad or from it: the arm's latest
// opposite rating becomes the new one, so a user who changes their mind is counted once.
func (g *Guard) Revise(arm string, bad bool) {
	g.observe(arm, func(w *armWindow, _ time.Time) {
		for i := len(w.rated.v) - 1; i >= 0; i-- {
			if w.rated.v[i] != bad {
				w.rated.v[i] = bad
				return
			}
		}
	})
}

func (g *Guard) observe(arm string, add func(*armWindow, time.Time)) {
	if arm == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	w, ok := g.arms[arm]
	if !ok {
		w = &armWindow{}
		g.arms[arm] = w
	}
	now := g.cfg.Now()
	add(w, now)
	if !g.off {
		g.check(now)
	}
}

// check compares every treatment arm with the control and rolls back on harm.
func (g *Guard) check(now time.Time) {
	cutoff := now.Add(-g.cfg.Window)
	for _, w := range g.arms {
		w.latency.expire(cutoff)
		w.rated.expire(cutoff)
	}
	c, ok := g.arms[g.control]
	if !ok {
		return
	}
	for arm, w := range g.arms {
		if !IsTreatment(arm) {
			continue
		}
		if n, m := len(w.rated.v), len(c.rated.v); n >= g.cfg.MinFeedback && m >= g.cfg.MinFeedback {
			if t, k := badShare(w.rated.v), badShare(c.rated.v); t > g.cfg.Factor*k {
				g.rollback(TriggerErrorRate, arm, slog.Float64("treatment_error_rate", t), slog.Float64("control_error_rate", k))
				return
			}
		}
		if n, m := len(w.latency.v), len(c.latency.v); n >= g.cfg.MinTurns && m >= g.cfg.MinTurns {
			if t, k := mean(w.latency.v), mean(c.latency.v); float64(t) > g.cfg.Factor*float64(k) {
				g.rollback(TriggerLatency, arm, slog.Duration("treatment_latency", t), slog.Duration("control_latency", k))
				return
			}
		}
	}
}

func (g *Guard) rollback(trigger, arm string, attrs ...slog.Attr) {
	g.off, g.trigger = true, trigger
	args := []any{slog.String("trigger", trigger), slog.String("arm", arm), slog.String("control", g.control)}
	for _, a := range attrs {
		args = append(args, a)
	}
	g.cfg.Logger.Error("experiment rolled back: treatment switched off", args...)
	g.rollbacks[trigger]++
}

// Rollbacks counts the rollbacks so far by trigger.
func (g *Guard) Rollbacks() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.rollbacks)
}

func badShare(v []bool) float64 {
	n := 0
	for _, b := range v {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(v))
}

func mean(v []time.Duration) time.Duration {
	var s time.Duration
	for _, d := range v {
		s += d
	}
	return s / time.Duration(len(v))
}
