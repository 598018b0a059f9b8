// Package focus tracks what a conversation is about, without an LLM: the entities and subjects
// named in its user turns, in the replies the chat UI records and in the titles of the sources
// it used, each with a weight that decays per turn like a carried source's. A follow-up that
// leans on the conversation ("are their bathrooms clean?") is searched with its focus; a turn
// that names its own subject is left alone.
//
// Entities are names the conversation said (the user, or the reply the chat UI recorded) that
// the corpus itself has: the titles of its documents, found in the text by a Gazetteer built
// from the index. Subjects are the telling words of user turns and the titles and headings of
// the sources the conversation used: what it is about, though nobody named them. Everything here is pure: values in, values out; the pipeline supplies the text and
// the corpus statistics, the store persists the Focus with the turn.
package focus

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kinds of term.
const (
	Entity  = "entity"  // a title of the corpus named in the conversation
	Subject = "subject" // a telling word of a user turn, or a source's title or heading
)

// Origins of a mention: where the conversation named a term.
const (
	FromUser   = "user"   // the user's message
	FromReply  = "reply"  // the assistant's reply, as the chat UI recorded it
	FromSource = "source" // the title of a source the turn returned
)

// Term is one thing the conversation is about.
type Term struct {
	// Text is the term as the corpus writes it (an entity's title) or as the user wrote it (a
	// subject).
	Text   string  `json:"text"`
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
	// Turn is the turn of the naming that gave it its weight (its strongest, usually its latest),
	// and Origin where that naming was.
	Turn   int    `json:"turn"`
	Origin string `json:"origin"`
}

// Focus is what a conversation is about as of a turn, heaviest terms first.
type Focus struct {
	Turn int `json:"turn"`
	// Replies is the last turn whose recorded reply has been read into the focus: a reply is
	// recorded after its turn, so the next turn reads it.
	Replies int    `json:"replies"`
	Terms   []Term `json:"terms"`
}

// Mention is a term named at a turn.
type Mention struct {
	Text   string
	Kind   string
	Origin string
	Turn   int
	// Strength scales the origin's weight, in (0, 1]; 0 counts as 1. A source's is its score
	// relative to the turn's best.
	Strength float64
}

// Config holds the focus's numbers.
type Config struct {
	// Decay multiplies a term's weight for every turn since it was last named.
	Decay float64
	// Floor is the weight under which a term is forgotten.
	Floor float64
	// Max is the most terms kept (the heaviest).
	Max int
	// User, Reply and Source weigh a mention by its origin.
	User, Reply, Source float64
}

// DefaultConfig returns the focus's defaults: decay as carried sources (0.7 per turn); a term
// named by the user or the recorded reply weighs 1, a source's title or heading half as much (a
// source is what retrieval found, not what anyone said).
func DefaultConfig() Config {
	return Config{Decay: 0.7, Floor: 0.05, Max: 16, User: 1, Reply: 1, Source: 0.5}
}

// FieldError is a bad number of a Config, by its field's name.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return "focus " + e.Field + ": " + e.Reason }

// Validate checks the numbers; it reports every bad field, each as a *FieldError, joined.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if c.Decay <= 0 || c.Decay > 1 {
		bad("Decay", "must be in (0, 1], got %g", c.Decay)
	}
	if c.Floor < 0 || c.Floor >= 1 {
		bad("Floor", "must be in [0, 1), got %g", c.Floor)
	}
	if c.Max < 0 {
		bad("Max", "must not be negative, got %d", c.Max)
	}
	for _, w := range []struct {
		field string
		v     float64
	}{{"User", c.User}, {"Reply", c.Reply}, {"Source", c.Source}} {
		if w.v < 0 || w.v > 1 {
			bad(w.field, "must be in 0..1, got %g", w.v)
		}
	}
	return errors.Join(errs...)
}

func (c Config) origin(o string) float64 {
	switch o {
	case FromUser:
		return c.User
	case FromReply:
		return c.Reply
	case FromSource:
		return c.Source
	}
	return 0
}

// decayed is w after the given number of turns.
func (c Config) decayed(w float64, turns int) float64 {
	for range max(turns, 0) {
		w *= c.Decay
	}
	return w
}

// At returns the focus as of a later turn: every term's weight decayed for the turns since it was
// last named (f.Turn's weights are as of f.Turn), and terms under Floor forgotten.
func (f Focus) At(turn int, cfg Config) Focus {
	out := Focus{Turn: max(turn, f.Turn), Replies: f.Replies}
	for _, t := range f.Terms {
		t.Weight = cfg.decayed(t.Weight, out.Turn-f.Turn)
		if t.Weight >= cfg.Floor && t.Weight > 0 {
			out.Terms = append(out.Terms, t)
		}
	}
	return out
}

// Add returns the focus with mentions read in. A mention weighs its origin's weight times its
// strength, decayed for the turns between it and f.Turn; a term keeps the weight of its
// strongest mention (a term named again is as fresh as its latest naming, not heavier for being
// repeated). Terms are matched without regard to case.
func (f Focus) Add(ms []Mention, cfg Config) Focus {
	out := Focus{Turn: f.Turn, Replies: f.Replies, Terms: slices.Clone(f.Terms)}
	at := map[string]int{}
	for i, t := range out.Terms {
		at[key(t.Kind, t.Text)] = i
	}
	for _, m := range ms {
		s := m.Strength
		if s <= 0 || s > 1 {
			s = 1
		}
		w := cfg.decayed(cfg.origin(m.Origin)*s, out.Turn-m.Turn)
		if w < cfg.Floor || w <= 0 || strings.TrimSpace(m.Text) == "" {
			continue
		}
		k := key(m.Kind, m.Text)
		if i, ok := at[k]; ok {
			if t := &out.Terms[i]; w >= t.Weight {
				t.Weight, t.Turn, t.Origin = w, m.Turn, m.Origin
			}
			continue
		}
		at[k] = len(out.Terms)
		out.Terms = append(out.Terms, Term{Text: m.Text, Kind: m.Kind, Weight: w, Turn: m.Turn, Origin: m.Origin})
	}
	slices.SortStableFunc(out.Terms, func(a, b Term) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(b.Turn, a.Turn), strings.Compare(a.Text, b.Text))
	})
	if cfg.Max >= 0 && len(out.Terms) > cfg.Max {
		out.Terms = out.Terms[:cfg.Max]
	}
	return out
}

func key(kind, text string) string { return kind + "\x00" + strings.ToLower(text) }

// Entities returns the focus's entities, heaviest first.
func (f Focus) Entities() []Term { return f.kind(Entity) }

// Subjects returns the focus's subjects, heaviest first.
func (f Focus) Subjects() []Term { return f.kind(Subject) }

func (f Focus) kind(k string) []Term {
	var out []Term
	for _, t := range f.Terms {
		if t.Kind == k {
			out = append(out, t)
		}
	}
	return out
}

// Leading returns the entities a leaning turn is searched with: the heaviest, and those close to
// it (within ratio of its weight: two options the user weighs together), at most n.
func (f Focus) Leading(ratio float64, n int) []Term {
	es := f.Entities()
	var out []Term
	for _, e := range es {
		if len(out) == n || e.Weight < ratio*es[0].Weight {
			break
		}
		out = append(out, e)
	}
	return out
}
