package mode

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd"
)

// Baseline is the mode distribution drift is measured against: the one a reference period of
// real traffic showed, or one an operator set.
type Baseline struct {
	// Distribution is the share of each mode; it need not sum to 1.
	Distribution map[Mode]float64 `json:"distribution"`
	// Observations is how many turns the reference period held (0 for a set baseline).
	Observations int `json:"observations"`
	// From and To bound the reference period (zero for a set baseline).
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Source is "observed" or "set".
	Source string `json:"source"`
}

// The sources of a Baseline.
const (
	BaselineObserved = "observed"
	BaselineSet      = "set"
)

// Validate checks that a baseline is a distribution over the modes.
func (b Baseline) Validate() error {
	var sum float64
	for m, v := range b.Distribution {
		if modeIndex(m) < 0 {
			return fmt.Errorf("unknown mode %q", m)
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: share %g must be a number >= 0", m, v)
		}
		sum += v
	}
	if sum <= 0 {
		return errors.New("the shares must not all be 0")
	}
	// Each share may be finite and their sum not: the monitor divides by it, and a baseline of
	// TASK=1e308,GENERAL=1e308 made the tenant's divergence NaN for good.
	if math.IsInf(sum, 0) {
		return errors.New("the shares add up to more than a float64 holds; give them as fractions")
	}
	return nil
}

// ParseBaseline reads a distribution written as MODE=share pairs separated by commas
// ("TASK=0.3,LEARNING=0.4,GENERAL=0.3"); modes left out have share 0.
func ParseBaseline(s string) (Baseline, error) {
	b := Baseline{Distribution: map[Mode]float64{}, Source: BaselineSet}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Baseline{}, fmt.Errorf("%q: want MODE=share", part)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return Baseline{}, fmt.Errorf("%q: %w", part, err)
		}
		b.Distribution[Mode(strings.ToUpper(strings.TrimSpace(name)))] = v
	}
	return b, b.Validate()
}

// Any is the tenant key of a baseline that holds for every tenant without one of its own.
const Any = "*"

// DriftConfig configures a Drift. DefaultDriftConfig gives the product's values; every field
// means what it says, zero included.
type DriftConfig struct {
	// Window is how far back observations count.
	Window time.Duration
	// Threshold is the KL divergence, in nats, above which the window diverges from the
	// baseline.
	Threshold float64
	// Hold is how long the divergence must stay above Threshold before classification falls
	// back: a busy quarter of an hour of one kind of question is traffic, not drift. 0 falls
	// back at once.
	Hold time.Duration
	// Reference is the length of the reference period: a tenant without a baseline observes
	// its traffic that long (and at least MinObservations turns), and that distribution becomes
	// its baseline, saved through Save.
	Reference time.Duration
	// MinObservations is how many observations a window needs before it can diverge, and a
	// reference period before it makes a baseline: with fewer, one busy user would decide.
	MinObservations int
	// Smoothing is the additive smoothing of the window's distribution (and of an observed
	// baseline), in pseudo-counts per mode. The window's distribution is q(m) = (n(m) +
	// 5·Smoothing·p(m)) / (n + 5·Smoothing): a small window is pulled towards the baseline p
	// and an empty one equals it. It damps the divergence of small windows without inventing
	// traffic the baseline does not expect.
	Smoothing float64
	// Baselines are the baselines known at start, by tenant: persisted ones, and under Any one
	// an operator set for every tenant without its own.
	Baselines map[string]Baseline
	// Save persists a baseline a reference period produced or an operator set; nil keeps it in
	// memory only.
	Save func(tenant string, b Baseline) error
	// Now returns the current time (default time.Now); tests inject a clock.
	Now func() time.Time
	// Logger receives the alerts (default slog.Default()).
	Logger *slog.Logger
}

// DefaultDriftConfig returns the product's values: a one-hour window, KL 0.1 held for an hour,
// a baseline observed over the first day of traffic (at least 50 turns), one pseudo-count.
func DefaultDriftConfig() DriftConfig {
	return DriftConfig{Window: time.Hour, Threshold: 0.1, Hold: time.Hour, Reference: 24 * time.Hour,
		MinObservations: 50, Smoothing: 1}
}

// Validate checks the settings; errors are *ragd.InputError naming the field.
func (c DriftConfig) Validate() error {
	var errs []error
	if c.Window <= 0 {
		errs = append(errs, ragd.Invalidf("Window", "must be positive, got %s", c.Window))
	}
	if c.Threshold < 0 || math.IsNaN(c.Threshold) {
		errs = append(errs, ragd.Invalidf("Threshold", "must be >= 0, got %g", c.Threshold))
	}
	if c.Hold < 0 {
		errs = append(errs, ragd.Invalidf("Hold", "must not be negative, got %s", c.Hold))
	}
	if c.Reference <= 0 {
		errs = append(errs, ragd.Invalidf("Reference", "must be positive, got %s", c.Reference))
	}
	if c.MinObservations < 1 {
		errs = append(errs, ragd.Invalidf("MinObservations", "must be at least 1, got %d", c.MinObservations))
	}
	if c.Smoothing <= 0 {
		errs = append(errs, ragd.Invalidf("Smoothing", "must be positive, got %g", c.Smoothing))
	}
	for tenant, b := range c.Baselines {
		if err := b.Validate(); err != nil {
			errs = append(errs, ragd.Invalidf("Baselines", "tenant %q: %v", tenant, err))
		}
	}
	return errors.Join(errs...)
}

// Drift watches the distribution of classified modes, per tenant, over a sliding time window
// and compares it with the tenant's baseline by the Kullback-Leibler divergence
// KL(window || baseline). When the divergence has stayed above the threshold for the hold
// period, the classifier is seeing traffic unlike what the tenant normally sends and its
// answers are suspect: callers of Detect then use GENERAL, the baseline budgets, until the
// divergence falls back under the threshold. Entering and leaving that state each log once.
//
// A tenant without a baseline has none to drift from: its first Reference of traffic is
// observed and becomes its baseline (saved through Save), so an ordinary mix of traffic never
// trips against an assumed one. It is safe for concurrent use.
type Drift struct {
	cfg DriftConfig

	mu      sync.Mutex
	tenants map[string]*driftState
}

// driftState is one tenant's drift.
type driftState struct {
	baseline [numModes]float64 // normalised and floored; valid when has
	base     Baseline
	has      bool

	refFrom   time.Time // first observation of the reference period
	refCounts [numModes]int
	refN      int

	events window[int] // mode indexes
	counts [numModes]int
	kl     float64
	above  time.Time // since when the divergence is above the threshold; zero when it is not
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

// NewDrift returns a Drift with empty windows.
func NewDrift(cfg DriftConfig) (*Drift, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mode: drift: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Drift{cfg: cfg, tenants: map[string]*driftState{}}, nil
}

// state returns a tenant's state, made with its known baseline on first use.
func (d *Drift) state(tenant string) *driftState {
	s, ok := d.tenants[tenant]
	if !ok {
		s = &driftState{alarm: alarm{logger: d.cfg.Logger.With(slog.String("tenant", tenant)), name: "mode distribution drift"}}
		if b, ok := d.cfg.Baselines[tenant]; ok {
			s.setBaseline(b)
		} else if b, ok := d.cfg.Baselines[Any]; ok {
			s.setBaseline(b)
		}
		d.tenants[tenant] = s
	}
	return s
}

// setBaseline normalises a baseline, with a floor so that a mode it calls impossible gives a
// large but finite divergence.
func (s *driftState) setBaseline(b Baseline) {
	const floor = 1e-3
	var sum float64
	for i, m := range Modes {
		s.baseline[i] = math.Max(b.Distribution[m], 0) + floor
		sum += s.baseline[i]
	}
	for i := range s.baseline {
		s.baseline[i] /= sum
	}
	s.base, s.has = b, true
}

// Observe records a tenant's classified mode and returns the divergence of its window, whether
// its classification falls back, and whether that just changed. A mode outside Modes is not
// recorded.
func (d *Drift) Observe(tenant string, m Mode) (kl float64, drifting bool, changed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.state(tenant)
	now := d.cfg.Now()
	if i := modeIndex(m); i >= 0 {
		if !s.has {
			d.reference(tenant, s, now, i)
			return 0, false, false
		}
		s.events.add(now, i)
		s.counts[i]++
	}
	changed = d.update(s, now)
	return s.kl, s.alarm.on, changed
}

// reference adds an observation to a tenant's reference period and, once the period is long
// and full enough, makes its distribution the baseline.
func (d *Drift) reference(tenant string, s *driftState, now time.Time, i int) {
	if s.refN == 0 {
		s.refFrom = now
	}
	s.refCounts[i]++
	s.refN++
	if now.Sub(s.refFrom) < d.cfg.Reference || s.refN < d.cfg.MinObservations {
		return
	}
	b := Baseline{Distribution: map[Mode]float64{}, Observations: s.refN, From: s.refFrom, To: now, Source: BaselineObserved}
	prior := d.cfg.Smoothing * numModes
	for j, m := range Modes {
		b.Distribution[m] = (float64(s.refCounts[j]) + d.cfg.Smoothing) / (float64(s.refN) + prior)
	}
	s.setBaseline(b)
	d.cfg.Logger.Info("mode drift baseline observed", slog.String("tenant", tenant), slog.Int("observations", s.refN),
		slog.Time("from", s.refFrom), slog.Time("to", now))
	if d.cfg.Save != nil {
		if err := d.cfg.Save(tenant, b); err != nil {
			d.cfg.Logger.Error("saving the mode drift baseline", slog.String("tenant", tenant), slog.String("error", err.Error()))
		}
	}
}

// SetBaseline replaces a tenant's baseline (under Any: the default of tenants without their
// own) and saves it; the tenant's window stays and is judged against the new baseline.
func (d *Drift) SetBaseline(tenant string, b Baseline) error {
	if err := b.Validate(); err != nil {
		return ragd.Invalidf("baseline", "%v", err)
	}
	b.Source, b.Observations, b.From, b.To = BaselineSet, 0, time.Time{}, time.Time{}
	if d.cfg.Save != nil {
		if err := d.cfg.Save(tenant, b); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if tenant == Any {
		if d.cfg.Baselines == nil {
			d.cfg.Baselines = map[string]Baseline{}
		}
		d.cfg.Baselines[Any] = b
		return nil
	}
	s := d.state(tenant)
	s.setBaseline(b)
	s.above = time.Time{}
	d.update(s, d.cfg.Now())
	return nil
}

// Baseline returns a tenant's baseline, and false while its reference period runs.
func (d *Drift) Baseline(tenant string) (Baseline, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.state(tenant)
	return s.base, s.has
}

// State returns a tenant's divergence and whether its classification falls back, as of now:
// observations that have left the window no longer count, so an alert whose evidence has aged
// out recovers here too (and logs so).
func (d *Drift) State(tenant string) (kl float64, drifting bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.state(tenant)
	d.update(s, d.cfg.Now())
	return s.kl, s.alarm.on
}

// DriftState is a tenant's drift as of now.
type DriftState struct {
	Tenant   string
	KL       float64 // 0 while the reference period runs
	Drifting bool
}

// States returns every tenant's state as of now, for gauges.
func (d *Drift) States() []DriftState {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]DriftState, 0, len(d.tenants))
	for tenant, s := range d.tenants {
		d.update(s, d.cfg.Now())
		out = append(out, DriftState{Tenant: tenant, KL: s.kl, Drifting: s.alarm.on})
	}
	slices.SortFunc(out, func(a, b DriftState) int { return strings.Compare(a.Tenant, b.Tenant) })
	return out
}

// update drops expired observations, recomputes the divergence and moves the alarm. The
// divergence counts once the window holds MinObservations; the alarm trips once it has been
// above Threshold for Hold, and recovers as soon as it is not.
func (d *Drift) update(s *driftState, now time.Time) (changed bool) {
	if !s.has {
		return false
	}
	s.events.expire(now.Add(-d.cfg.Window), func(i int) { s.counts[i]-- })
	n := s.events.len()
	prior := d.cfg.Smoothing * numModes
	s.kl = 0
	for i, c := range s.counts {
		q := (float64(c) + prior*s.baseline[i]) / (float64(n) + prior)
		s.kl += q * math.Log(q/s.baseline[i])
	}
	above := n >= d.cfg.MinObservations && s.kl > d.cfg.Threshold
	switch {
	case !above:
		s.above = time.Time{}
	case s.above.IsZero():
		s.above = now
	}
	active := above && now.Sub(s.above) >= d.cfg.Hold
	return s.alarm.set(active, "kl", s.kl, "observations", n, "window", d.cfg.Window)
}
