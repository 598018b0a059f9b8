// Package carry holds the rules by which a conversation carries its sources from turn to turn,
// so that a follow-up question keeps its footing without an LLM rewriting it:
//
//   - every turn, the sources carried so far are re-scored against the new question;
//   - a source enters the turn's fusion, as its own ranked list, when its re-score is at least
//     Tau, or when the user pinned it;
//   - a source used in the turn (among the sources returned) is fresh again: its carry score is
//     its strength in the turn (1 for the best source), no idle turns; every other carried
//     source decays by Decay and counts an idle turn, and after MaxIdle idle turns it is dropped;
//   - pinned sources never decay and are never dropped;
//   - a new topic drops every carried source except the pinned ones.
//
// A dropped source keeps its row (and so its marker letter) in the conversation; it is only no
// longer carried. The functions here are pure: the pipeline re-scores, the store persists.
package carry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
)

// Config holds the carry-over numbers.
type Config struct {
	// Tau is the re-score a carried source needs to enter a turn. Re-scores are in [0, 1]
	// whatever computed them (cross-encoder probability, cosine similarity, or the share of
	// the question's IDF mass found in the source), so one threshold serves all three.
	Tau float64
	// Decay multiplies the carry score of a source for every turn it is not used.
	Decay float64
	// MaxIdle is the number of turns without use after which a source is dropped.
	MaxIdle int
	// Cap is the most carried sources that enter one turn's fusion.
	Cap int
}

// DefaultConfig returns the product spec's numbers. Every field of a Config means what it
// says, zero included: Tau 0 lets every carried source in, Cap 0 lets none in.
func DefaultConfig() Config { return Config{Tau: 0.2, Decay: 0.7, MaxIdle: 3, Cap: 10} }

// Validate checks the numbers. Its errors are *ragd.InputError naming the field.
func (c Config) Validate() error {
	var errs []error
	if c.Tau < 0 || c.Tau > 1 {
		errs = append(errs, ragd.Invalidf("Tau", "must be in 0..1, got %g", c.Tau))
	}
	if c.Decay <= 0 || c.Decay > 1 {
		errs = append(errs, ragd.Invalidf("Decay", "must be in (0, 1], got %g", c.Decay))
	}
	if c.MaxIdle < 1 {
		errs = append(errs, ragd.Invalidf("MaxIdle", "must be at least 1, got %d", c.MaxIdle))
	}
	if c.Cap < 0 {
		errs = append(errs, ragd.Invalidf("Cap", "must not be negative, got %d", c.Cap))
	}
	return errors.Join(errs...)
}

// Reasons recorded on conversation sources: why a source is, or stopped being, carried.
const (
	ReasonRetrieved = "retrieved"    // found by this turn's retrieval and returned
	ReasonCarried   = "carried"      // carried from an earlier turn and returned again
	ReasonPinned    = "pinned"       // pinned by the user
	ReasonIdle      = "idle"         // not used for MaxIdle turns: dropped
	ReasonNewTopic  = "new-topic"    // dropped when the conversation changed topic
	ReasonWaiting   = "not-used"     // carried, not returned this turn: decaying
	ReasonBelowTau  = "below-tau"    // carried, but its re-score was under Tau this turn
	ReasonUnpinned  = "unpinned"     // the user removed the pin
	ReasonDeleted   = "deleted"      // the document was deleted (shown, not stored: see ragd.ConversationSource.Deleted)
	reasonFormatIdx = "%s (turn %d)" // how reasons are written with their turn
)

// Candidates returns the sources that may enter this turn: every pinned source, and every
// carried one unless the turn starts a new topic.
func Candidates(sources []ragd.ConversationSource, newTopic bool) []ragd.ConversationSource {
	var out []ragd.ConversationSource
	for _, s := range sources {
		if s.Pinned || (s.Carried && !newTopic) {
			out = append(out, s)
		}
	}
	return out
}

// Pick is a carried source entering a turn's fusion.
type Pick struct {
	DocID   uuid.UUID
	ChunkID int64   // the source's chunk that re-scored best: the one fusion ranks
	ReScore float64 // against this turn's question, in [0, 1]
	Carry   float64 // the source's carry score
	Score   float64 // ReScore times Carry: the order of the carried list
	Pinned  bool
}

// ReScore is a carried source's best re-score and the chunk that earned it.
type ReScore struct {
	ChunkID int64
	Score   float64
}

// Select decides which candidates enter the turn, ordered for the carried list: pinned sources
// first (the user asked for them), then by re-score times carry score, at most Cap. A source
// without a re-score (none of its chunks is searchable any more) does not enter.
func Select(candidates []ragd.ConversationSource, rescores map[uuid.UUID]ReScore, cfg Config) []Pick {
	var picks []Pick
	for _, s := range candidates {
		r, ok := rescores[s.DocID]
		if !ok || (!s.Pinned && r.Score < cfg.Tau) {
			continue
		}
		picks = append(picks, Pick{DocID: s.DocID, ChunkID: r.ChunkID, ReScore: r.Score, Carry: s.CarryScore,
			Score: r.Score * s.CarryScore, Pinned: s.Pinned})
	}
	slices.SortStableFunc(picks, func(a, b Pick) int {
		if a.Pinned != b.Pinned {
			if a.Pinned {
				return -1
			}
			return 1
		}
		// Equal products (zero re-scores, when tau is waived) fall back to the carry score.
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Carry, a.Carry))
	})
	return picks[:min(len(picks), cfg.Cap)]
}

// Used is what a turn returned of one document.
type Used struct {
	Letter string
	// Strength is the document's best score in the turn relative to the turn's best source, in
	// (0, 1]: a used source's carry score starts there, so the sources the turn leaned on most
	// are carried most strongly. Zero counts as 1.
	Strength float64
	Chunks   []int64 // chunks cited
	Facts    []ragd.Fact
	// Carried says the document came through the carried list (and not only fresh retrieval).
	Carried bool
}

func (u Used) strength() float64 {
	if u.Strength <= 0 || u.Strength > 1 {
		return 1
	}
	return u.Strength
}

// Turn is what the rules need to know about the turn being recorded.
type Turn struct {
	Number   int // the turn being recorded
	Now      time.Time
	NewTopic bool
	// Used holds the documents the turn returned.
	Used map[uuid.UUID]Used
	// BelowTau holds carried documents whose re-score was under Tau this turn.
	BelowTau map[uuid.UUID]bool
	// Pin holds the documents the request pinned, with their letters (a document the
	// conversation had not seen gets one from the pipeline).
	Pin map[uuid.UUID]string
}

// Update returns the new state of a conversation's sources after a turn: every prior source with
// its decay, idle count and reason applied, then the documents the turn used for the first time,
// in the order of t.Used's letters. prior is the state as of the turn's lock.
func Update(prior []ragd.ConversationSource, t Turn, cfg Config) []ragd.ConversationSource {
	seen := map[uuid.UUID]bool{}
	out := make([]ragd.ConversationSource, 0, len(prior)+len(t.Used))
	for _, s := range prior {
		seen[s.DocID] = true
		if _, ok := t.Pin[s.DocID]; ok {
			s.Pinned, s.Carried = true, true
		}
		u, used := t.Used[s.DocID]
		switch {
		case used:
			s.CarryScore, s.InactiveTurns, s.Carried = u.strength(), 0, true
			s.LastTurn, s.LastUsedAt = t.Number, t.Now
			s.CitedChunkIDs, s.Facts = u.Chunks, u.Facts
			s.Reason = ReasonRetrieved
			if u.Carried {
				s.Reason = ReasonCarried
			}
			if s.Pinned {
				s.Reason = ReasonPinned
			}
		case s.Pinned:
			// Pinned sources never decay and are never dropped.
			s.Carried, s.Reason = true, ReasonPinned
		case !s.Carried:
			// Dropped earlier: stays dropped until retrieval finds it again.
		case t.NewTopic:
			s.Carried, s.Reason = false, fmt.Sprintf(reasonFormatIdx, ReasonNewTopic, t.Number)
		default:
			s.CarryScore *= cfg.Decay
			s.InactiveTurns++
			s.Reason = ReasonWaiting
			if t.BelowTau[s.DocID] {
				s.Reason = ReasonBelowTau
			}
			if s.InactiveTurns >= cfg.MaxIdle {
				s.Carried, s.Reason = false, fmt.Sprintf(reasonFormatIdx, ReasonIdle, t.Number)
			}
		}
		out = append(out, s)
	}
	var fresh []ragd.ConversationSource
	for id, u := range t.Used {
		if seen[id] {
			continue
		}
		s := ragd.ConversationSource{DocID: id, Marker: u.Letter, CarryScore: u.strength(), Carried: true, FirstTurn: t.Number,
			LastTurn: t.Number, LastUsedAt: t.Now, CitedChunkIDs: u.Chunks, Facts: u.Facts, Reason: ReasonRetrieved}
		if _, ok := t.Pin[id]; ok {
			s.Pinned, s.Reason = true, ReasonPinned
		}
		fresh = append(fresh, s)
	}
	for id, letter := range t.Pin {
		if _, used := t.Used[id]; !seen[id] && !used {
			fresh = append(fresh, ragd.ConversationSource{DocID: id, Marker: letter, CarryScore: 1, Pinned: true,
				Carried: true, FirstTurn: t.Number, LastTurn: t.Number, LastUsedAt: t.Now, Reason: ReasonPinned})
		}
	}
	// New rows in letter order, so the state reads in the order documents were first cited.
	slices.SortFunc(fresh, func(a, b ragd.ConversationSource) int {
		return cmp.Or(cmp.Compare(len(a.Marker), len(b.Marker)), cmp.Compare(a.Marker, b.Marker))
	})
	return append(out, fresh...)
}
