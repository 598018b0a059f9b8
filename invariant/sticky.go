package invariant

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Sticky returns the invariants a conversation carries into every context bundle, from its
// user messages (oldest first):
//
//   - every safety requirement, hard constraint and blocking error, with equal texts (compared
//     without case, spacing or end punctuation) kept once, from the latest turn that said them;
//   - only the latest user correction: a correction replaces the one before it, and the
//     earlier ones were about a state of the conversation that no longer holds;
//   - no blocking error that a later message says is fixed (see below).
//
// They are ordered by priority, highest first, then by turn, latest first; invariants of one
// turn keep their message order.
//
// A message resolves errors when one of its sentences says so ("fixed now", "that works",
// "resolved", "it works now"), with no negation before those words, no "still" or "again" in
// the sentence, and no question mark. If that sentence names an open error, sharing a
// distinctive word with its text ("the KeyError is fixed" for "KeyError: 'embedding'"), it
// resolves the errors it names; otherwise it resolves those of the latest earlier message that
// reported any, since "that works" answers the last problem discussed, not all of them. A
// message never resolves its own errors: "X works now; but Y fails" reports Y.
//
// A correction does not retract the constraints it contradicts ("actually it doesn't need to be
// in the north"): both stay, the correction with the higher priority. Sticky runs Detect on
// every message, about 0.1 ms for a chat sentence (BenchmarkDetect); a caller that runs it
// every turn on long conversations can keep each message's spans instead.
func Sticky(messages []Message) []Invariant { return StickyAfter(nil, messages) }

// StickyAfter is Sticky of a conversation's earlier user messages followed by messages, given
// only before, Sticky's result for the earlier ones: a turn need not read a long conversation
// again to carry its invariants. Fixes and corrections in messages apply to before as to any
// earlier invariant. (Sticky keeps one copy of a repeated text, so a blocking error reported
// twice and then fixed is gone here; reading every message, its first report would return.)
func StickyAfter(before []Invariant, messages []Message) []Invariant {
	// Oldest first, as Sticky found them; within a turn their order is kept.
	found := slices.Clone(before)
	slices.SortStableFunc(found, func(a, b Invariant) int { return cmp.Compare(a.Turn, b.Turn) })
	for _, m := range messages {
		found = resolve(found, m.Text)
		spans := m.Spans
		if spans == nil {
			spans = Detect(m.Text)
		}
		for _, s := range spans {
			found = append(found, Invariant{Type: s.Type, Text: s.Text, Turn: m.Turn, MessageID: m.ID, Priority: s.Type.Priority()})
		}
	}

	// Latest correction only, and one invariant per text: walk from the latest, keep firsts.
	var out []Invariant
	seen := map[string]bool{}
	corrected := false
	for i := len(found) - 1; i >= 0; i-- {
		inv := found[i]
		key := sameText(inv.Text)
		if seen[key] || inv.Type == Correction && corrected {
			continue
		}
		seen[key] = true
		corrected = corrected || inv.Type == Correction
		out = append(out, inv)
	}
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b Invariant) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(b.Turn, a.Turn))
	})
	return out
}

// sameText is the key under which two invariant texts are the same.
func sameText(s string) string {
	return strings.TrimRight(strings.Join(strings.Fields(strings.ToLower(s)), " "), ".!?;:, ")
}

var (
	// fixedRe is a sentence saying that a problem is gone.
	fixedRe = re(`\b(?:fixed|resolved|solved|sorted (?:it|out)|works now|working now|that works|it works|that did it|fine now)\b`)
	// unfixedRe turns the same words around: a negation before them ("not fixed yet", "it
	// never works"), or a problem that persists ("I fixed the typo but it still fails").
	unfixedRe = re(`(?:\bnot|n't|\bnever|\bno longer)\b[^.!?]*\b(?:fixed|resolved|solved|sorted|works?|working|fine)\b|\b(?:still|again)\b`)
)

// resolve returns found without the blocking errors that msg says are fixed.
func resolve(found []Invariant, msg string) []Invariant {
	var said []string
	for _, s := range sentences(msg, 0, len(msg)) {
		text := normalise(msg[s.Start:s.End])
		if fixedRe.MatchString(text) && !unfixedRe.MatchString(text) && !questionRe.MatchString(text) {
			said = append(said, text)
		}
	}
	if len(said) == 0 {
		return found
	}
	words := distinctive(strings.Join(said, " "))
	named := func(inv Invariant) bool {
		return inv.Type == Blocking && slices.ContainsFunc(distinctive(normalise(inv.Text)), func(w string) bool {
			return slices.Contains(words, w)
		})
	}
	drop := named
	if !slices.ContainsFunc(found, named) {
		var latest Invariant
		for _, inv := range found {
			if inv.Type == Blocking {
				latest = inv
			}
		}
		drop = func(inv Invariant) bool {
			return inv.Type == Blocking && inv.Turn == latest.Turn && inv.MessageID == latest.MessageID
		}
	}
	return slices.DeleteFunc(slices.Clone(found), drop)
}

// wordRe is a word for naming an error: letters, digits and underscores.
var wordRe = regexp.MustCompile(`[a-z0-9_]+`)

// distinctive returns the words of a normalised text that can name one error rather than any:
// four letters or more, and none of the words every report and every fix uses.
func distinctive(text string) []string {
	var out []string
	for _, w := range wordRe.FindAllString(text, -1) {
		if len(w) >= 4 && !generic[w] {
			out = append(out, w)
		}
	}
	return out
}

var generic = map[string]bool{
	"error": true, "errors": true, "issue": true, "problem": true, "fixed": true, "resolved": true, "solved": true,
	"works": true, "working": true, "work": true, "that": true, "this": true, "there": true, "with": true, "from": true,
	"have": true, "thanks": true, "thank": true, "fine": true, "sorted": true, "again": true, "still": true, "when": true,
	"what": true, "then": true, "just": true, "also": true, "it's": true, "that's": true, "yesterday": true, "today": true,
	"earlier": true, "before": true, "after": true, "failing": true, "fails": true, "failed": true, "now": true,
}
