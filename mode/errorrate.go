package mode

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd"
)

// ErrorRateConfig configures an ErrorRate. DefaultErrorRateConfig gives the product's values;
// every field means what it says, zero included.
type ErrorRateConfig struct {
	// Window is how far back a mode's feedback counts towards its error rate.
	Window time.Duration
	// Reference is how far back feedback of every mode counts towards the baseline error rate,
	// when the baseline is observed.
	Reference time.Duration
	// Factor is how many times the baseline a mode's error rate must exceed for the mode to
	// fall back to GENERAL.
	Factor float64
	// MinFeedback is how much feedback a mode's window, and the reference, must hold before a
	// mode can fall back: with less, two thumbs down would decide.
	MinFeedback int
	// Baseline is the baseline error rate when BaselineSet; otherwise it is observed: the
	// share of negative feedback over all modes in the reference window.
	Baseline    float64
	BaselineSet bool
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alerts (default slog.Default()).
	Logger *slog.Logger
}

// DefaultErrorRateConfig returns the product's values: a mode falls back when its last day's
// error rate (at least 20 ratings) is more than twice the baseline, observed over the last week.
func DefaultErrorRateConfig() ErrorRateConfig {
	return ErrorRateConfig{Window: 24 * time.Hour, Reference: 7 * 24 * time.Hour, Factor: 2, MinFeedback: 20}
}

// Validate checks the settings; errors are *ragd.InputError naming the field.
func (c ErrorRateConfig) Validate() error {
	var errs []error
	if c.Window <= 0 {
		errs = append(errs, ragd.Invalidf("Window", "must be positive, got %s", c.Window))
	}
	if c.Reference <= 0 {
		errs = append(errs, ragd.Invalidf("Reference", "must be positive, got %s", c.Reference))
	}
	if c.Factor < 1 || math.IsNaN(c.Factor) {
		errs = append(errs, ragd.Invalidf("Factor", "must be at least 1, got %g", c.Factor))
	}
	if c.MinFeedback < 1 {
		errs = append(errs, ragd.Invalidf("MinFeedback", "must be at least 1, got %d", c.MinFeedback))
	}
	if c.BaselineSet && (c.Baseline < 0 || c.Baseline > 1) {
		errs = append(errs, ragd.Invalidf("Baseline", "must be in 0..1, got %g", c.Baseline))
	}
	return errors.Join(errs...)
}

// ErrorRate turns feedback into a guardrail: per tenant and mode, the share of negative
// feedback on recent turns of that mode, against a baseline. A mode whose error rate exceeds
// Factor times the baseline is failing its users; callers of Detect then answer GENERAL for it
// (the baseline budgets) until its rate comes back under. Entering and leaving that state log
// once per mode. It is safe for concurrent use.
type ErrorRate struct {
	cfg ErrorRateConfig

	mu      sync.Mutex
	tenants map[string]*errorState
}

type errorState struct {
	modes  [numModes]modeErrors
	ref    window[bool] // every mode's feedback, bad or not, for the observed baseline
	refBad int
}

type modeErrors struct {
	events window[bool]
	bad    int
	alarm  alarm
}

// NewErrorRate returns an ErrorRate with empty windows.
func NewErrorRate(cfg ErrorRateConfig) (*ErrorRate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mode: error rate: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &ErrorRate{cfg: cfg, tenants: map[string]*errorState{}}, nil
}

func (e *ErrorRate) state(tenant string) *errorState {
	s, ok := e.tenants[tenant]
	if !ok {
		s = &errorState{}
		for i, m := range Modes {
			s.modes[i].alarm = alarm{logger: e.cfg.Logger.With(slog.String("tenant", tenant), slog.String("mode", string(m))),
				name: "mode error rate"}
		}
		e.tenants[tenant] = s
	}
	return s
}

// Observe records one rating, now, of a turn of mode m, bad for a thumbs-down. It reports
// whether the mode's state changed.
func (e *ErrorRate) Observe(tenant string, m Mode, bad bool) (changed bool) {
	return e.ObserveAt(tenant, m, bad, e.cfg.Now())
}

// ObserveAt is Observe for a rating given at time at: feedback read back at start-up keeps
// its own time.
func (e *ErrorRate) ObserveAt(tenant string, m Mode, bad bool, at time.Time) (changed bool) {
	i := modeIndex(m)
	if i < 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state(tenant)
	s.modes[i].events.add(at, bad)
	s.ref.add(at, bad)
	if bad {
		s.modes[i].bad++
		s.refBad++
	}
	return e.update(s, i, e.cfg.Now())
}

// Revise records that a rating of a turn of mode m was changed to bad (a thumbs-down) or from
// it: the latest opposite rating in the windows becomes the new one, so a user who changes their
// mind is counted once. It reports whether the mode's state changed.
func (e *ErrorRate) Revise(tenant string, m Mode, bad bool) (changed bool) {
	i := modeIndex(m)
	if i < 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state(tenant)
	delta := -1
	if bad {
		delta = 1
	}
	if revise(&s.modes[i].events, bad) {
		s.modes[i].bad += delta
	}
	if revise(&s.ref, bad) {
		s.refBad += delta
	}
	return e.update(s, i, e.cfg.Now())
}

// ModeErrors is one mode's error rate as of now.
type ModeErrors struct {
	Tenant string
	Mode   Mode
	// Rate is the share of negative feedback in the window (0 without any), out of Feedback.
	Rate     float64
	Feedback int
	// Baseline is the baseline error rate (observed or set); Failing is true while the mode
	// falls back.
	Baseline float64
	Failing  bool
}

// Failing reports whether a tenant's mode falls back, as of now.
func (e *ErrorRate) Failing(tenant string, m Mode) bool {
	i := modeIndex(m)
	if i < 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state(tenant)
	e.update(s, i, e.cfg.Now())
	return s.modes[i].alarm.on
}

// States returns every tenant's modes as of now, for gauges.
func (e *ErrorRate) States() []ModeErrors {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ModeErrors
	now := e.cfg.Now()
	for tenant, s := range e.tenants {
		for i, m := range Modes {
			e.update(s, i, now)
			me := &s.modes[i]
			r := ModeErrors{Tenant: tenant, Mode: m, Feedback: me.events.len(), Baseline: e.baseline(s), Failing: me.alarm.on}
			if r.Feedback > 0 {
				r.Rate = float64(me.bad) / float64(r.Feedback)
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b ModeErrors) int {
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return modeIndex(a.Mode) - modeIndex(b.Mode)
	})
	return out
}

// baseline is the baseline error rate: the set one, or the reference window's, NaN while the
// reference holds too little feedback to say.
func (e *ErrorRate) baseline(s *errorState) float64 {
	if e.cfg.BaselineSet {
		return e.cfg.Baseline
	}
	n := s.ref.len()
	if n < e.cfg.MinFeedback {
		return math.NaN()
	}
	return float64(s.refBad) / float64(n)
}

// update expires old feedback and moves mode i's alarm.
func (e *ErrorRate) update(s *errorState, i int, now time.Time) (changed bool) {
	s.ref.expire(now.Add(-e.cfg.Reference), func(bad bool) {
		if bad {
			s.refBad--
		}
	})
	me := &s.modes[i]
	me.events.expire(now.Add(-e.cfg.Window), func(bad bool) {
		if bad {
			me.bad--
		}
	})
	n := me.events.len()
	base := e.baseline(s)
	rate := 0.0
	if n > 0 {
		rate = float64(me.bad) / float64(n)
	}
	active := n >= e.cfg.MinFeedback && !math.IsNaN(base) && rate > e.cfg.Factor*base
	return me.alarm.set(active, "error_rate", rate, "baseline", base, "feedback", n, "window", e.cfg.Window)
}
