// Package experiment runs the product's A/B experiment on context bundles: it assigns
// conversations to arms (at their first turn, in balanced blocks per tenant, never switched),
// reports per arm and mode stratum with a two-proportion z-test and the sample size still
// needed, and rolls the treatment back when it does clear harm (Guard).
//
// Two designs: budgets compares mode-aware budgets (treatment) with GENERAL's for every turn
// (control), the question the product's mode classifier exists for; recent-window is an
// ablation of the bundle's recent window (every earlier turn, the last 3, the last 1, none),
// with "all" as its control.
package experiment

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/ragd/ragd"
)

// Design is which experiment runs.
type Design string

// The designs.
const (
	Off          Design = "off"           // every conversation gets the mode's budgets, no arm
	Budgets      Design = "budgets"       // treatment: the mode's budgets; control: GENERAL's
	RecentWindow Design = "recent-window" // ablation of the recent window: all, last 3, last 1, none
)

// The arms.
const (
	Treatment = "treatment"
	Control   = "control"
	RecentAll = "recent-all"
	Recent3   = "recent-3"
	Recent1   = "recent-1"
	Recent0   = "recent-0"
)

// Budget is how treatment's budgets are set in the budgets design.
type Budget string

const (
	// Free gives treatment its mode's budgets as the product table has them.
	Free Budget = "free"
	// Matched scales treatment's mode budgets to the control's total, so the comparison is of
	// how the tokens are spent, not how many: the confirmatory analysis of the product document.
	Matched Budget = "matched"
)

// Config is the experiment's settings.
type Config struct {
	Design Design
	// ControlRatio is the share of conversations in control, in the budgets design.
	ControlRatio float64
	// Budget is free or matched.
	Budget Budget
	// Block is the size of the blocks arms are assigned in: within every Block consecutive new
	// conversations of a tenant the arms are in their exact shares (rounded), in a random order.
	Block int
}

// DefaultConfig is the budgets design with every conversation in treatment (ControlRatio 0):
// mode-aware budgets for all until an operator starts the experiment.
func DefaultConfig() Config { return Config{Design: Budgets, Budget: Free, Block: 20} }

// Validate checks the settings; errors are *ragd.InputError naming the field.
func (c Config) Validate() error {
	var errs []error
	switch c.Design {
	case Off, Budgets, RecentWindow:
	default:
		errs = append(errs, ragd.Invalidf("Design", "must be off, budgets or recent-window, got %q", c.Design))
	}
	if c.ControlRatio < 0 || c.ControlRatio > 1 {
		errs = append(errs, ragd.Invalidf("ControlRatio", "must be in 0..1, got %g", c.ControlRatio))
	}
	if c.Budget != Free && c.Budget != Matched {
		errs = append(errs, ragd.Invalidf("Budget", "must be free or matched, got %q", c.Budget))
	}
	if c.Block < 1 {
		errs = append(errs, ragd.Invalidf("Block", "must be at least 1, got %d", c.Block))
	}
	return errors.Join(errs...)
}

// Arms lists a design's arms, its control first.
func (c Config) Arms() []string {
	switch c.Design {
	case Budgets:
		return []string{Control, Treatment}
	case RecentWindow:
		return []string{RecentAll, Recent3, Recent1, Recent0}
	}
	return nil
}

// ControlArm is the arm the others are compared with.
func (c Config) ControlArm() string {
	if arms := c.Arms(); len(arms) > 0 {
		return arms[0]
	}
	return ""
}

// block returns the arms of one block in their shares, unshuffled.
func (c Config) block() []string {
	arms := c.Arms()
	out := make([]string, 0, c.Block)
	switch c.Design {
	case Budgets:
		control := int(c.ControlRatio*float64(c.Block) + 0.5)
		for i := range c.Block {
			out = append(out, arms[min(1, boolInt(i >= control))])
		}
	case RecentWindow:
		for i := range c.Block {
			out = append(out, arms[i%len(arms)])
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Assign returns the arm of a tenant's new conversation from the slot it was handed (0, 1, 2...
// per tenant and design; the store counts them). Slots are cut into blocks; each block holds
// the arms in their shares in an order shuffled by a seed of the tenant, design and block, so
// the arms stay balanced within every tenant at every moment (blocked randomisation) while no
// one can tell the next arm from the last. "" when the design is off.
func (c Config) Assign(tenant string, slot int64) string {
	b := c.block()
	if len(b) == 0 {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write([]byte(c.Design))
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(slot/int64(len(b))))
	h.Write(n[:])
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5851f42d4c957f2d))
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return b[slot%int64(len(b))]
}

// RecentTurns is how many earlier turns the recent window of an arm keeps: -1 for all.
func RecentTurns(arm string) int {
	switch arm {
	case Recent3:
		return 3
	case Recent1:
		return 1
	case Recent0:
		return 0
	}
	return -1
}

// IsTreatment reports whether an arm departs from the product's default behaviour, which is
// what a rollback switches off.
func IsTreatment(arm string) bool {
	return slices.Contains([]string{Treatment, Recent3, Recent1, Recent0}, arm)
}
