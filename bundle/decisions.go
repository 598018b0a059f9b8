package bundle

import (
	"regexp"
	"strings"

	"github.com/ragd/ragd/citations"
)

var (
	// decided is a sentence that settles something: the phrases people use to close a choice.
	decided = regexp.MustCompile(`(?i)\b(?:let's (?:go with|use|do|stick with|keep)|let us (?:go with|use)|we(?:'ll| will) (?:use|go with|stick with|keep)|we(?:'re| are) (?:going with|using|sticking with)|(?:i|we)(?:'ll| will) go with|go(?:ing)? with|decided|decision:|we chose|we(?:'ve| have) chosen|agreed|settled on|final answer:|the plan is)`)
	// undecided is the same words saying that nothing is settled yet.
	undecided = regexp.MustCompile(`(?i)\b(?:not (?:yet )?decided|haven't decided|have not decided|undecided|yet to decide|didn't decide|never (?:really )?(?:settled|decided|agreed)|(?:if|whether|should|shall|could|would) (?:we |you |i )?(?:go with|use|decide)|not agreed|no decision|can't decide|cannot decide)\b`)
)

// Decisions extracts the decisions stated in the turns, user's and assistant's alike: sentences
// with a deciding phrase ("let's go with", "we'll use", "decided", "we chose", "agreed", "final
// answer:", ...) that are neither questions nor the same phrase negated ("we haven't decided",
// "should we go with X?"). They come most recent last; a decision stated twice is kept once, at
// its latest place, so that restating a decision moves it forward.
//
// It is cheap on purpose: it runs every turn, and a missed decision costs little, since the
// recent window still holds the latest turns verbatim.
func Decisions(turns []Turn) []string {
	var out []string
	at := map[string]int{} // normalised sentence -> index in out
	for _, t := range turns {
		for _, s := range citations.Sentences(t.Text) {
			text := s.Text
			if !decided.MatchString(text) || undecided.MatchString(text) || strings.HasSuffix(strings.TrimRight(text, `"')]`), "?") {
				continue
			}
			key := strings.ToLower(strings.Join(strings.Fields(text), " "))
			if i, ok := at[key]; ok {
				out[i] = "" // superseded by the restatement below
			}
			at[key] = len(out)
			out = append(out, text)
		}
	}
	kept := out[:0]
	for _, d := range out {
		if d != "" {
			kept = append(kept, d)
		}
	}
	return kept
}
