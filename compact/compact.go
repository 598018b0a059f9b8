// Package compact decides what of a conversation's history a turn's context bundle carries.
//
// A conversation is a run of goals: a user asks for something (a table for two, then a hotel,
// then a taxi between them), settles it over a few turns, and moves on. Boundary decides, per
// user turn, whether it starts a new goal. A goal is finished when the next one starts, and its
// messages can then be replaced by a capsule: a short structured summary of what the user
// wanted, the values settled and what was achieved (Extract), or an LLM's summary.
//
// Four strategies decide what the bundle's recent window shows:
//
//   - full: every message verbatim (the bundle's budget still cuts the oldest);
//   - sliding-window: the latest messages only, by count or by tokens; older ones are gone;
//   - goal-boundary: the current goal's messages verbatim, every finished goal as its capsule;
//   - token-budget: every message verbatim while they fit a token budget, then finished goals
//     replaced by their capsules, oldest first, until they fit.
//
// Everything here is a pure function of its arguments: the turn pipeline and the replay
// experiment (ragd eval compaction) call the same code. Sticky invariants are not this package's
// business: they are drawn from every user message, compacted or not, by the bundle.
package compact

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/token"
)

// Message is one message of a conversation as compaction sees it.
type Message struct {
	Turn int
	Role string // "user" or "assistant"
	Text string
	// GoalStart marks the user message that started a goal. A conversation's first message
	// starts its first goal whether marked or not.
	GoalStart bool
}

// Goal is a run of messages, from the user message that started it to the message before the
// next goal's start.
type Goal struct {
	First, Last int // turn numbers
	Messages    []Message
}

// Goals splits msgs (oldest first) into goals.
func Goals(msgs []Message) []Goal {
	var out []Goal
	for _, m := range msgs {
		if len(out) == 0 || (m.GoalStart && m.Role == "user" && m.Turn > out[len(out)-1].First) {
			out = append(out, Goal{First: m.Turn})
		}
		g := &out[len(out)-1]
		g.Messages = append(g.Messages, m)
		g.Last = m.Turn
	}
	return out
}

// Missing returns the finished goals of msgs (all but the last) that have no capsule in caps.
func Missing(msgs []Message, caps []ragd.Capsule) []Goal {
	goals := Goals(msgs)
	var out []Goal
	for _, g := range goals[:max(len(goals)-1, 0)] {
		if capsuleOf(caps, g) < 0 {
			out = append(out, g)
		}
	}
	return out
}

// capsuleOf returns the index in caps of the capsule of goal g, or -1. A conversation read
// through a window of its latest messages may begin in the middle of a goal, which Goals then
// starts at the window's first message: the capsule that covers that turn is the goal's.
func capsuleOf(caps []ragd.Capsule, g Goal) int {
	return slices.IndexFunc(caps, func(c ragd.Capsule) bool { return c.First <= g.First && g.First <= c.Last })
}

// Window is what a strategy keeps of a conversation: messages verbatim, oldest first, and the
// capsules of the finished goals whose messages they replace, oldest first.
type Window struct {
	Recent   []Message
	Capsules []ragd.Capsule
	// Dropped counts the messages neither kept nor summarized.
	Dropped int
}

// Strategy decides what of a conversation's history a turn sees.
type Strategy interface {
	// Name is the strategy's configuration name.
	Name() string
	// Window selects from msgs (the conversation so far, oldest first, the current user
	// message last when there is one; or only its latest messages, with the current goal's
	// first) and caps (the capsules of its finished goals).
	Window(msgs []Message, caps []ragd.Capsule) Window
	// Capsules says whether the strategy uses capsules, so that finished goals are worth
	// summarizing.
	Capsules() bool
}

// Strategy names.
const (
	Full          = "full"
	SlidingWindow = "sliding-window"
	GoalBoundary  = "goal-boundary"
	TokenBudget   = "token-budget"
)

// Names lists the strategies in report order.
var Names = []string{Full, SlidingWindow, GoalBoundary, TokenBudget}

// Config chooses a strategy and sizes it. Every field means what it says, zero included.
type Config struct {
	// Strategy is one of Names.
	Strategy string
	// WindowMessages is how many of the latest messages sliding-window keeps (at least 1).
	WindowMessages int
	// BudgetTokens is the token budget of token-budget: the verbatim messages and capsules it
	// keeps fit in it unless the current goal alone does not (at least 1).
	BudgetTokens int
	// CapsuleTokens bounds one capsule; 0 makes no capsules, so that finished goals stay
	// verbatim whatever the strategy.
	CapsuleTokens int
}

// DefaultConfig is goal-boundary compaction, with a sliding window of six messages (three
// exchanges) and a token budget of 2000 tokens (the TASK mode's recent window) for the other
// strategies, and capsules of at most 400 tokens.
func DefaultConfig() Config {
	return Config{Strategy: GoalBoundary, WindowMessages: 6, BudgetTokens: 2000, CapsuleTokens: 400}
}

// Validate checks the configuration. Each error is a *ragd.InputError naming the field.
func (c Config) Validate() error {
	var errs []error
	if !slices.Contains(Names, c.Strategy) {
		errs = append(errs, ragd.Invalidf("Strategy", "%q is not one of %s", c.Strategy, strings.Join(Names, ", ")))
	}
	if c.WindowMessages < 1 {
		errs = append(errs, ragd.Invalidf("WindowMessages", "must be at least 1 message, got %d", c.WindowMessages))
	}
	if c.BudgetTokens < 1 {
		errs = append(errs, ragd.Invalidf("BudgetTokens", "must be at least 1 token, got %d", c.BudgetTokens))
	}
	if c.CapsuleTokens < 0 {
		errs = append(errs, ragd.Invalidf("CapsuleTokens", "must not be negative (0 makes no capsules), got %d", c.CapsuleTokens))
	}
	return errors.Join(errs...)
}

// New returns the configured strategy.
func New(c Config) (Strategy, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	switch c.Strategy {
	case Full:
		return FullContext{}, nil
	case SlidingWindow:
		return Sliding{Messages: c.WindowMessages}, nil
	case TokenBudget:
		return Budget{Tokens: c.BudgetTokens}, nil
	}
	return Boundaries{}, nil
}

// FullContext keeps every message.
type FullContext struct{}

func (FullContext) Name() string   { return Full }
func (FullContext) Capsules() bool { return false }

// Window keeps every message.
func (FullContext) Window(msgs []Message, _ []ragd.Capsule) Window {
	return Window{Recent: msgs}
}

// Sliding keeps the latest messages: at most Messages of them, and when Tokens is positive, as
// many as fit in Tokens (see MessageTokens; the latest message is kept even when it alone does
// not fit). A zero field does not limit.
type Sliding struct {
	Messages int
	Tokens   int
}

func (Sliding) Name() string   { return SlidingWindow }
func (Sliding) Capsules() bool { return false }

// Window keeps the latest messages that the limits allow.
func (s Sliding) Window(msgs []Message, _ []ragd.Capsule) Window {
	n, used := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if s.Messages > 0 && n == s.Messages {
			break
		}
		t := MessageTokens(msgs[i])
		if s.Tokens > 0 && n > 0 && used+t > s.Tokens {
			break
		}
		n, used = n+1, used+t
	}
	return Window{Recent: msgs[len(msgs)-n:], Dropped: len(msgs) - n}
}

// Boundaries keeps the current goal's messages and the capsules of the finished goals.
type Boundaries struct{}

func (Boundaries) Name() string   { return GoalBoundary }
func (Boundaries) Capsules() bool { return true }

// Window keeps the last goal verbatim and every earlier goal as its capsule. A finished goal
// without a capsule (the caller had none to give) stays verbatim rather than vanish.
func (Boundaries) Window(msgs []Message, caps []ragd.Capsule) Window {
	return compactOldest(msgs, caps, func([]Message, []ragd.Capsule) bool { return true })
}

// Budget keeps every message while the messages fit in Tokens, then replaces finished goals by
// their capsules, oldest first, until the messages and capsules fit or only the current goal is
// verbatim.
type Budget struct {
	Tokens int
}

func (Budget) Name() string   { return TokenBudget }
func (Budget) Capsules() bool { return true }

// Window compacts the oldest goals until the rest fits the budget.
func (b Budget) Window(msgs []Message, caps []ragd.Capsule) Window {
	return compactOldest(msgs, caps, func(recent []Message, kept []ragd.Capsule) bool {
		used := 0
		for _, m := range recent {
			used += MessageTokens(m)
		}
		for _, c := range kept {
			used += token.Count(c.Text)
		}
		return used > b.Tokens
	})
}

// compactOldest replaces finished goals with their capsules, oldest first, while over says the
// window is still too big. The goals that finished before msgs begin (a conversation read
// through a window of its latest messages) are there as their capsules only.
func compactOldest(msgs []Message, caps []ragd.Capsule, over func([]Message, []ragd.Capsule) bool) Window {
	goals := Goals(msgs)
	w := Window{Recent: msgs}
	if len(msgs) > 0 {
		for _, c := range caps {
			if c.Last < msgs[0].Turn {
				w.Capsules = append(w.Capsules, c)
			}
		}
	}
	for _, g := range goals[:max(len(goals)-1, 0)] {
		if !over(w.Recent, w.Capsules) {
			break
		}
		at := capsuleOf(caps, g)
		if at < 0 {
			continue
		}
		w.Capsules = append(w.Capsules, caps[at])
		// Goals are contiguous: what is left verbatim starts at the next goal, unless an
		// earlier goal had no capsule and stays.
		var rest []Message
		for _, m := range w.Recent {
			if m.Turn < g.First || m.Turn > g.Last {
				rest = append(rest, m)
			}
		}
		w.Recent = rest
	}
	return w
}

// MessageTokens is what a message costs in a window, in cl100k tokens: its role and text, and
// about four for the turn label the bundle writes before it.
func MessageTokens(m Message) int {
	return token.Count(m.Role+": "+m.Text) + 4
}
