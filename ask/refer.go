package ask

import (
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/refer"
)

// A turn that refers to sources the conversation showed ("the second one", "[B]", "the Hobsons
// House one") is about those sources: it is a same-sources turn whatever a classifier would say,
// the sources it names are carried into it even when carry-over had dropped them, and they come
// first among its sources. The sources it sets aside ("not the first one") are not carried.

// shownKey is the assistant message's meta key for the sources the turn showed, in order.
const shownKey = "shown"

// shownSource is one source a turn showed, as its assistant message's meta keeps it.
type shownSource struct {
	Letter string    `json:"letter"`
	DocID  uuid.UUID `json:"doc_id"`
	Title  string    `json:"title"`
}

// shownMeta is what a turn's assistant message keeps of its sources: their order, letters and
// titles, which later turns' references count and name.
func shownMeta(sources []Source) []shownSource {
	out := make([]shownSource, len(sources))
	for i, s := range sources {
		out[i] = shownSource{Letter: s.Letter, DocID: s.DocID, Title: s.Title}
	}
	return out
}

// shownOf returns what the conversation showed: every source its assistant messages kept (the
// last turn that showed a source counts), and the conversation's other sources by their letters
// alone (turns recorded before messages kept what they showed).
func shownOf(msgs []ragd.Message, sources []ragd.ConversationSource) []refer.Shown {
	at := map[uuid.UUID]int{}
	var out []refer.Shown
	add := func(s refer.Shown) {
		if i, ok := at[s.DocID]; ok {
			out[i] = s
			return
		}
		at[s.DocID] = len(out)
		out = append(out, s)
	}
	for _, m := range msgs {
		if m.Role != "assistant" || m.Meta[shownKey] == nil {
			continue
		}
		var shown []shownSource
		b, err := json.Marshal(m.Meta[shownKey])
		if err != nil || json.Unmarshal(b, &shown) != nil {
			continue
		}
		for i, s := range shown {
			add(refer.Shown{DocID: s.DocID, Letter: s.Letter, Title: s.Title, Turn: m.Turn, Rank: i + 1})
		}
	}
	for _, s := range sources {
		if _, ok := at[s.DocID]; !ok && s.Marker != "" {
			add(refer.Shown{DocID: s.DocID, Letter: s.Marker, Turn: s.LastTurn})
		}
	}
	return out
}

// references resolves the message's references to what the conversation showed. A title named
// without a cue ("is Hobsons House quiet?") names the turn's subject, not the passage shown: it
// is left to retrieval and the conversation focus (on DSTC11 dev, where many passages share an
// entity's name, putting the shown one first cost carry-over 0.03 nDCG@5 on self-contained
// turns); set aside, it is still set aside.
func references(message string, cv conversation, st *ragd.ConversationState) refer.Resolution {
	previous := ""
	if n := len(cv.history); n > 0 {
		previous = cv.history[n-1]
	}
	res := refer.Resolve(message, shownOf(cv.messages, st.Sources), previous)
	res.Refers = slices.DeleteFunc(res.Refers, func(r refer.Ref) bool { return r.Kind == refer.Named })
	return res
}

// withReferences returns the carry candidates of a turn with the sources it refers to (carried
// again if carry-over had dropped them) and without those it excludes.
func withReferences(cands, sources []ragd.ConversationSource, res refer.Resolution) []ragd.ConversationSource {
	excluded := refer.IDs(res.Excludes)
	out := slices.DeleteFunc(slices.Clone(cands), func(c ragd.ConversationSource) bool { return slices.Contains(excluded, c.DocID) })
	for _, id := range refer.IDs(res.Refers) {
		if slices.ContainsFunc(out, func(c ragd.ConversationSource) bool { return c.DocID == id }) {
			continue
		}
		if i := slices.IndexFunc(sources, func(s ragd.ConversationSource) bool { return s.DocID == id }); i >= 0 {
			s := sources[i]
			s.Carried, s.CarryScore = true, max(s.CarryScore, 1)
			out = append(out, s)
		}
	}
	return out
}

// referredPicks puts the carried sources the turn refers to first in the carried list, in the
// order the turn names them, and keeps them all even past the cap; a cap of 0 (no carried list)
// keeps none.
func referredPicks(picks []carry.Pick, res refer.Resolution, cap int) []carry.Pick {
	ids := refer.IDs(res.Refers)
	if len(ids) == 0 || cap == 0 {
		return picks[:min(len(picks), cap)]
	}
	rank := func(p carry.Pick) int {
		if i := slices.Index(ids, p.DocID); i >= 0 {
			return i
		}
		return len(ids)
	}
	out := slices.Clone(picks)
	slices.SortStableFunc(out, func(a, b carry.Pick) int { return rank(a) - rank(b) })
	n := 0
	for _, p := range out {
		if rank(p) < len(ids) {
			n++
		}
	}
	return out[:min(len(out), max(cap, n))]
}

// referredFirst orders a turn's kept sources: those the turn refers to first, in the order it
// names them (taken from ranked, every document's best passage, when the cut left them out),
// then the others as ranked; those it excludes are left out.
func referredFirst(ranked, kept []Candidate, res refer.Resolution) []Candidate {
	if res.Empty() {
		return kept
	}
	excluded := refer.IDs(res.Excludes)
	var out []Candidate
	for _, id := range refer.IDs(res.Refers) {
		if i := slices.IndexFunc(ranked, func(c Candidate) bool { return c.Chunk.DocID == id }); i >= 0 {
			out = append(out, ranked[i])
		}
	}
	n := max(len(kept), len(out))
	for _, c := range kept {
		if len(out) == n {
			break
		}
		if !slices.Contains(excluded, c.Chunk.DocID) && !slices.ContainsFunc(out, func(o Candidate) bool { return o.Chunk.DocID == c.Chunk.DocID }) {
			out = append(out, c)
		}
	}
	return out
}

// referredBy sets, on each source the turn refers to, the words that referred to it.
func referredBy(sources []Source, res refer.Resolution) {
	for i := range sources {
		if j := slices.IndexFunc(res.Refers, func(r refer.Ref) bool { return r.DocID == sources[i].DocID }); j >= 0 {
			sources[i].Referred = res.Refers[j].Phrase
		}
	}
}
