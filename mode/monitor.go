package mode

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ragd/ragd"
)

// LowConfidenceConfig configures a LowConfidence. DefaultLowConfidenceConfig gives the
// product's values; every field means what it says, zero included.
type LowConfidenceConfig struct {
	// Window is how far back observations count.
	Window time.Duration
	// Threshold is the confidence under which a request counts as low (Detect's threshold).
	Threshold float64
	// MaxShare is the share of low-confidence requests above which LowConfidence alerts.
	MaxShare float64
	// MinObservations is how many observations the window must hold before it can alert.
	MinObservations int
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alerts (default slog.Default()).
	Logger *slog.Logger
}

// DefaultLowConfidenceConfig returns the product's values: more than 30% of the last 30
// minutes' requests (at least 50) under the fallback threshold (DefaultConfig, 0.40).
func DefaultLowConfidenceConfig() LowConfidenceConfig {
	return LowConfidenceConfig{Window: 30 * time.Minute, Threshold: DefaultConfig().Threshold, MaxShare: 0.30, MinObservations: 50}
}

// LowConfidence tracks the share of requests whose classifier confidence is under the
// threshold over a sliding time window. Above MaxShare it is alerting: most turns fall back to
// GENERAL, so the classifier is not earning its keep. Entering and leaving that state each log
// once. It is safe for concurrent use.
type LowConfidence struct {
	cfg LowConfidenceConfig

	mu     sync.Mutex
	events window[bool] // low or not
	low    int
	share  float64
	alarm  alarm
}

// NewLowConfidence returns a LowConfidence with an empty window.
func NewLowConfidence(cfg LowConfidenceConfig) (*LowConfidence, error) {
	var errs []error
	if cfg.Window <= 0 {
		errs = append(errs, ragd.Invalidf("Window", "must be positive, got %s", cfg.Window))
	}
	if cfg.Threshold < 0 || cfg.Threshold > 1 {
		errs = append(errs, ragd.Invalidf("Threshold", "must be in 0..1, got %g", cfg.Threshold))
	}
	if cfg.MaxShare < 0 || cfg.MaxShare > 1 {
		errs = append(errs, ragd.Invalidf("MaxShare", "must be in 0..1, got %g", cfg.MaxShare))
	}
	if cfg.MinObservations < 1 {
		errs = append(errs, ragd.Invalidf("MinObservations", "must be at least 1, got %d", cfg.MinObservations))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("mode: low confidence: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &LowConfidence{cfg: cfg, alarm: alarm{logger: cfg.Logger, name: "mode classifier low confidence"}}, nil
}

// Observe records one request's classifier confidence and returns the share of low-confidence
// requests in the window, whether it is alerting, and whether that just changed.
func (l *LowConfidence) Observe(confidence float64) (share float64, alerting bool, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.Now()
	low := confidence < l.cfg.Threshold
	l.events.add(now, low)
	if low {
		l.low++
	}
	changed = l.update(now)
	return l.share, l.alarm.on, changed
}

// State returns the share of low-confidence requests in the window and whether it is
// alerting, as of now (see Drift.State).
func (l *LowConfidence) State() (share float64, alerting bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.update(l.cfg.Now())
	return l.share, l.alarm.on
}

// update drops expired observations, recomputes the share and moves the alarm, with the same
// rules as Drift's.
func (l *LowConfidence) update(now time.Time) (changed bool) {
	l.events.expire(now.Add(-l.cfg.Window), func(low bool) {
		if low {
			l.low--
		}
	})
	n := l.events.len()
	l.share = 0
	if n > 0 {
		l.share = float64(l.low) / float64(n)
	}
	active := n >= l.cfg.MinObservations && l.share > l.cfg.MaxShare
	return l.alarm.set(active, "share", l.share, "observations", n, "window", l.cfg.Window)
}

// window is a time-ordered queue of observations.
type window[T any] struct {
	times  []time.Time
	values []T
	head   int
}

func (w *window[T]) add(t time.Time, v T) {
	w.times = append(w.times, t)
	w.values = append(w.values, v)
}

func (w *window[T]) len() int { return len(w.times) - w.head }

// expire drops observations at or before cutoff, calling drop for each.
func (w *window[T]) expire(cutoff time.Time, drop func(T)) {
	for w.head < len(w.times) && !w.times[w.head].After(cutoff) {
		drop(w.values[w.head])
		w.head++
	}
	// Reclaim the dropped prefix once it is most of the slice, keeping appends amortised O(1).
	if w.head > 1024 && w.head > len(w.times)/2 {
		w.times = append(w.times[:0], w.times[w.head:]...)
		w.values = append(w.values[:0], w.values[w.head:]...)
		w.head = 0
	}
}

// revise turns the latest live observation that is not bad into bad (or the reverse), reporting
// whether there was one: a rating its user changed counts once, as what it says now.
func revise(w *window[bool], bad bool) bool {
	for i := len(w.values) - 1; i >= w.head; i-- {
		if w.values[i] != bad {
			w.values[i] = bad
			return true
		}
	}
	return false
}

// alarm is an on/off state that logs its transitions.
type alarm struct {
	on     bool
	logger *slog.Logger
	name   string
}

// set moves the alarm and logs a warning on entering and a note on recovering; it reports
// whether the state changed.
func (a *alarm) set(active bool, attrs ...any) (changed bool) {
	if active == a.on {
		return false
	}
	a.on = active
	if active {
		a.logger.Warn(a.name+": alerting", attrs...)
	} else {
		a.logger.Info(a.name+": recovered", attrs...)
	}
	return true
}
