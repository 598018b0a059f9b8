package mode

import (
	"hash/fnv"
	"log/slog"
	"math"
	"sync"
	"time"
)

// TrainingBaseline is the mode distribution of modes_train.jsonl, the data the embedded model
// learned from: 80 turns of each mode. Drift compares live traffic with it by default.
var TrainingBaseline = map[Mode]float64{Task: 0.2, Exploration: 0.2, Debugging: 0.2, Learning: 0.2, General: 0.2}

// DriftConfig configures a Drift. Zero fields take the defaults given.
type DriftConfig struct {
	// Window is how far back observations count (default 1 hour).
	Window time.Duration
	// Threshold is the KL divergence, in nats, above which the distribution is drifting
	// (default 0.1).
	Threshold float64
	// MinObservations is how many observations the window must hold before Drift can trip
	// (default 50): with fewer, one busy user would look like drift.
	MinObservations int
	// Baseline is the expected distribution (default TrainingBaseline). It need not sum to 1.
	Baseline map[Mode]float64
	// Smoothing is the additive smoothing of the window's distribution, in pseudo-counts per
	// mode (default 1). The 5×Smoothing pseudo-counts are shared out in proportion to the
	// baseline, so the window's distribution is q(m) = (n(m) + 5·Smoothing·p(m)) / (n +
	// 5·Smoothing): a small window is pulled towards the baseline, an empty one equals it, and
	// against the default uniform baseline this is Laplace smoothing. It damps the divergence
	// of small windows without inventing traffic the baseline does not expect.
	Smoothing float64
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alerts (default slog.Default()).
	Logger *slog.Logger
}

// Drift watches the distribution of classified modes over a sliding time window and compares
// it with a baseline by the Kullback-Leibler divergence KL(window || baseline). When the
// divergence is above the threshold the classifier is seeing traffic unlike its training data
// and its answers are suspect: callers of Detect should then use GENERAL, the baseline
// budgets. Entering and leaving that state each log once. It is safe for concurrent use.
type Drift struct {
	cfg      DriftConfig
	baseline [numModes]float64

	mu     sync.Mutex
	events window[int] // mode indexes
	counts [numModes]int
	kl     float64
	alarm  alarm
}

const numModes = 5

// modeIndex returns the index of a mode in Modes, or -1.
func modeIndex(m Mode) int {
	for i, x := range Modes {
		if x == m {
			return i
		}
	}
	return -1
}

// NewDrift returns a Drift with an empty window.
func NewDrift(cfg DriftConfig) *Drift {
	if cfg.Window <= 0 {
		cfg.Window = time.Hour
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = 0.1
	}
	if cfg.MinObservations <= 0 {
		cfg.MinObservations = 50
	}
	if cfg.Baseline == nil {
		cfg.Baseline = TrainingBaseline
	}
	if cfg.Smoothing <= 0 {
		cfg.Smoothing = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := &Drift{cfg: cfg, alarm: alarm{logger: cfg.Logger, name: "mode distribution drift"}}
	// Normalise the baseline, with a floor so that a mode it calls impossible gives a large
	// but finite divergence.
	const floor = 1e-3
	var sum float64
	for i, m := range Modes {
		d.baseline[i] = math.Max(cfg.Baseline[m], 0) + floor
		sum += d.baseline[i]
	}
	for i := range d.baseline {
		d.baseline[i] /= sum
	}
	return d
}

// Observe records a classified mode and returns the divergence of the window, whether the
// distribution is drifting, and whether that just changed. A mode outside Modes is not
// recorded.
func (d *Drift) Observe(m Mode) (kl float64, drifting bool, changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.cfg.Now()
	if i := modeIndex(m); i >= 0 {
		d.events.add(now, i)
		d.counts[i]++
	}
	changed = d.update(now)
	return d.kl, d.alarm.on, changed
}

// State returns the divergence of the window and whether the distribution is drifting, as of
// now: observations that have left the window no longer count, so an alert whose evidence has
// aged out recovers here too (and logs so).
func (d *Drift) State() (kl float64, drifting bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.update(d.cfg.Now())
	return d.kl, d.alarm.on
}

// update drops expired observations, recomputes the divergence and moves the alarm. It trips
// when the window holds at least MinObservations and the divergence is above Threshold, and
// recovers when either stops being true.
func (d *Drift) update(now time.Time) (changed bool) {
	d.events.expire(now.Add(-d.cfg.Window), func(i int) { d.counts[i]-- })
	n := d.events.len()
	prior := d.cfg.Smoothing * numModes
	d.kl = 0
	for i, c := range d.counts {
		q := (float64(c) + prior*d.baseline[i]) / (float64(n) + prior)
		d.kl += q * math.Log(q/d.baseline[i])
	}
	active := n >= d.cfg.MinObservations && d.kl > d.cfg.Threshold
	return d.alarm.set(active, "kl", d.kl, "observations", n, "window", d.cfg.Window)
}

// LowConfidenceConfig configures a LowConfidence. Zero fields take the defaults given.
type LowConfidenceConfig struct {
	// Window is how far back observations count (default 30 minutes).
	Window time.Duration
	// Threshold is the confidence under which a request counts as low (default 0.70, Detect's).
	Threshold float64
	// MaxShare is the share of low-confidence requests above which LowConfidence alerts
	// (default 0.30).
	MaxShare float64
	// MinObservations is how many observations the window must hold before it can alert
	// (default 50).
	MinObservations int
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alerts (default slog.Default()).
	Logger *slog.Logger
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
func NewLowConfidence(cfg LowConfidenceConfig) *LowConfidence {
	if cfg.Window <= 0 {
		cfg.Window = 30 * time.Minute
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = 0.70
	}
	if cfg.MaxShare <= 0 {
		cfg.MaxShare = 0.30
	}
	if cfg.MinObservations <= 0 {
		cfg.MinObservations = 50
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &LowConfidence{cfg: cfg, alarm: alarm{logger: cfg.Logger, name: "mode classifier low confidence"}}
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

// The arms of the mode-aware budgets experiment.
const (
	// Treatment conversations get their mode's budgets.
	Treatment = "treatment"
	// Control conversations get GENERAL's budgets whatever their mode.
	Control = "control"
)

// Arm assigns a conversation to Treatment or Control. The FNV-1a hash of the id, as a fraction
// of 2^64, is compared with ratio, the share of conversations in Treatment (0 puts all in
// Control, 1 all in Treatment). The same id always gets the same arm, on every server and
// across restarts, and raising the ratio only moves conversations from Control to Treatment.
func Arm(conversationID [16]byte, ratio float64) string {
	h := fnv.New64a()
	h.Write(conversationID[:])
	// The top 53 bits as a float in [0, 1).
	if float64(h.Sum64()>>11)/(1<<53) < ratio {
		return Treatment
	}
	return Control
}
