package bundle

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/token"
)

// Capsule summarises a finished goal segment extractively, in at most maxTokens tokens:
//
//	Goal: <the segment's first user message>
//	Key points: <sentences of the assistant's answers>
//
// The key points are the answer sentences that share the most content words with the goal
// (ties to the earlier sentence), added while they fit and then put back in the order they
// were said. When no sentence shares a word with the goal, the key point is the first sentence
// of the last answer, which is where an answer usually states its outcome. A goal too long for
// maxTokens is truncated and gets no key points; maxTokens of zero or less gives "".
func Capsule(segment []Turn, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	var goal string
	var answers [][]citations.Sentence
	for _, t := range segment {
		switch {
		case t.Role == "user" && goal == "":
			goal = strings.Join(strings.Fields(t.Text), " ")
		case t.Role == "assistant":
			answers = append(answers, citations.Sentences(t.Text))
		}
	}
	head := "Goal: " + goal
	if goal == "" {
		head = ""
	}
	if token.Count(head) >= maxTokens {
		return token.Fit(head, maxTokens)
	}

	type scored struct {
		text  string
		pos   int
		score int
	}
	want := contentWords(goal)
	var cands []scored
	seen := map[string]bool{}
	pos := 0
	for _, sents := range answers {
		for _, s := range sents {
			if seen[s.Text] {
				continue
			}
			seen[s.Text] = true
			pos++
			n := 0
			for w := range contentWords(s.Text) {
				if want[w] {
					n++
				}
			}
			if n > 0 {
				cands = append(cands, scored{text: s.Text, pos: pos, score: n})
			}
		}
	}
	if len(cands) == 0 {
		for i := len(answers) - 1; i >= 0; i-- {
			if len(answers[i]) > 0 {
				cands = append(cands, scored{text: answers[i][0].Text})
				break
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.pos, b.pos)) })

	var kept []scored
	render := func(kept []scored) string {
		if len(kept) == 0 {
			return head
		}
		texts := make([]string, len(kept))
		for i, k := range kept {
			texts[i] = strings.Join(strings.Fields(k.text), " ")
		}
		points := "Key points: " + strings.Join(texts, " ")
		if head == "" {
			return points
		}
		return head + "\n" + points
	}
	for _, c := range cands {
		next := append(slices.Clone(kept), c)
		slices.SortFunc(next, func(a, b scored) int { return cmp.Compare(a.pos, b.pos) })
		if token.Count(render(next)) <= maxTokens {
			kept = next
		}
	}
	return render(kept)
}

// wordRe is a word for overlap: letters, digits and apostrophes ("don't" is one word).
var wordRe = regexp.MustCompile(`[\p{L}\p{N}']+`)

// contentWords returns the lower-cased, crudely stemmed words of text that carry meaning: three
// letters or more and not a stop word. The stemming only folds plurals and common suffixes, so
// that "rotating keys" meets "rotate the key".
func contentWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordRe.FindAllString(strings.ToLower(text), -1) {
		if len(w) < 3 || stopWords[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

func stem(w string) string {
	for _, suffix := range []string{"ing", "ed", "es", "s", "e"} {
		if len(w) > len(suffix)+2 && strings.HasSuffix(w, suffix) {
			return strings.TrimSuffix(w, suffix)
		}
	}
	return w
}

// stopWords are the words too common to say what a sentence is about.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours with this that these those there their they them
		from have has had was were been being will would can could should shall may might must what which who whom whose when
		where why how all any each few more most other some such only own same than too very just also into onto over under
		about above below after before again further then once here both nor off out its it's our ours she her his him himself
		herself itself myself yourself ourselves themselves does did doing done don't doesn't didn't isn't aren't wasn't
		weren't won't can't i'm i've i'd i'll we're we've we'd we'll let's get got use using make made want need like`) {
		m[w] = true
	}
	return m
}()
