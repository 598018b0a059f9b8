package intent

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/ragd/ragd/classify"
)

// historyTurns is how many previous user turns the classifier looks at: the labels were
// written with at most three in view, and a topic that left those three counts as new.
const historyTurns = 3

// Cue patterns, matched against the lower-cased turn with single spaces. They follow the
// labelling rules in ../shared/data/labels/README.md §3; the model learns how much each counts.
var (
	// Explicit anchors on material already shown: the strongest same-sources evidence.
	anchorCue = anyOf(words(
		`you (?:just )?(?:mentioned|said|listed|cited|wrote|quoted|showed|are mentioning)`,
		`are you (?:saying|sure)`, `what do you mean`, `do you mean`, `so does that mean`, `does that mean`,
		`so,? are you`, `in other words`, `according to`, `isn't that`, `is that the reason`,
		`is that (?:true|right|correct)`, `clarify`, `quote`,
		`in that (?:document|doc|page|article|contract|section)`,
		`(?:that|this|the same) (?:document|doc|page|whitepaper|contract|article|postmortem|result|results|list|link|answer|rfc|policy)`,
		`from the same`, `page \d+`, `section \d+`, `here`, `above`,
		`the (?:first|second|third|last|top) (?:one|result|link|option|entry|item)`, `the one you`,
		`(?:first|second|third) one`, `last option`, `one listed`,
		`those (?:results|places|gurus|conversations|support)`, `of those`, `for those`, `either of`, `both have`,
	))
	// Pronouns and demonstratives that lean on something said before.
	anaphoraCue = anyOf(words(`it`, `its`, `it's`, `they`, `them`, `their`, `theirs`, `that`, `this`, `these`,
		`those`, `there`, `he`, `she`, `his`, `her`, `one`, `ones`, `either`, `both`, `such`))
	// Contrast, ranking and choice between entities.
	compareCue = anyOf(words(
		`vs\.?`, `versus`, `differen(?:ce|ces|t)`, `differs?`, `compared?(?: to| with)?`, `comparison`,
		`same as`, `the same (?:thing|for)`, `more or less`, `better off`, `tradeoffs?`, `pros and cons`,
		`instead of`, `rather than`, `\w+er than`, `more \w+ than`, `less \w+ than`,
		`(?:better|worse|cheaper|faster|safer|slower|older|newer|larger|smaller|bigger|lower|higher|more|less|easier|harder) (?:than|or|one)`,
		`which (?:one|is|are|has|have|would|should|protects|pays|scales)`,
	))
	// "X or Y" inside a question, or opening the turn: a choice between two options.
	orChoiceCue = anyOf(`\b\w+ or \w+\b.*\?`, `\?.*\b\w+ or \w+\b`, `^\S+ or \S+`)
	// Explicit topic changes, and the MultiWOZ way of opening a new domain ("I also need…").
	shiftCue = anyOf(words(
		`cha\w*ng\w* (?:of |the |a little(?: bit)? (?:of )?)?(?:the )?subject`, `changing a little`,
		`different (?:question|thing|topic)`, `another (?:question|topic|thing)`, `new question`,
		`unrelated`, `by the way`, `btw`, `back to`, `going back to`, `now i want`, `totally different`,
		`forget (?:about )?\w+`, `speaking (?:about|of)`, `talking about`, `on another note`,
		`switching gears`, `moving on`,
		`(?:i'?m|i am|i 'm|i) (?:also|am also) (?:looking|need|want)`, `also (?:looking|need|want)`,
		`i also (?:need|want)`, `(?:also|too) need`, `also like to`,
	))
	// Service domains of task-oriented dialogues: a turn naming a domain its history does not
	// is usually a domain switch.
	domainCue = anyOf(words(`restaurants?`, `food`, `eat`, `dine`, `dinner`, `lunch`, `hotels?`, `guesthouses?`,
		`stay`, `lodging`, `trains?`, `taxis?`, `cab`, `attractions?`, `museums?`, `colleges?`, `parks?`,
		`theatres?`, `cinemas?`, `churches`, `church`, `pool`, `entertainment`, `sports?`, `hospital`,
		`police`, `pharmacy`, `places? to (?:go|visit|see)`))
	// Openers of a follow-up on the same subject.
	followOpener = anyOf(opening(`and`, `so`, `also`, `but`, `ok`, `okay`, `what about`, `how about`,
		`and what`, `then`, `is there (?:one|another|any other)`, `are there (?:any )?other`, `any other`,
		`tell me more`, `more about`, `can you (?:explain|tell me) more`))
)

// words returns a pattern matching any of the alternatives (themselves patterns) as whole words.
func words(alts ...string) string { return `\b(?:` + strings.Join(alts, "|") + `)\b` }

// opening returns a pattern matching any of the alternatives as the text's first words.
func opening(alts ...string) string { return `^(?:` + strings.Join(alts, "|") + `)\b` }

// anyOf compiles a pattern matching any of the given ones.
func anyOf(patterns ...string) *regexp.Regexp { return regexp.MustCompile(strings.Join(patterns, "|")) }

// stopwords are words that say nothing about the subject; they are left out of the overlap
// between a turn and its history.
var stopwords = func() map[string]bool {
	words := strings.Fields(`a an the and or but if then so of to in on at by for with from as about into over
		under than too very can could would should will shall may might must do does did done doing is are was
		were be been being am have has had having i me my mine we us our you your he she it its they them their
		this that these those there here what which who whom whose when where why how not no yes ok okay please
		thanks thank tell know like want need also any some more most other just get got give let make s t
		'm 's n't re ve ll d really much many one ones all each every both either same new now well there's what's
		it's i'm don't does doesn't im`)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}()

// stem reduces a word to a crude stem so that "controversy" meets "controversies" and
// "invest" meets "investing": common suffixes are cut, then the word is truncated to six
// letters.
func stem(w string) string {
	for _, suf := range []string{"'s", "ies", "ing", "ed", "es", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			break
		}
	}
	if r := []rune(w); len(r) > 6 {
		w = string(r[:6])
	}
	return w
}

// terms returns the stemmed content words of a text.
func terms(text string) []string {
	var out []string
	for _, tok := range classify.Tokenize(text) {
		if stopwords[tok] || !hasLetter(tok) || len([]rune(tok)) < 2 {
			continue
		}
		out = append(out, stem(tok))
	}
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// normalize lower-cases text, folds typographic apostrophes and collapses white space, the form
// the cue patterns expect.
func normalize(text string) string {
	text = strings.ReplaceAll(strings.ToLower(text), "’", "'")
	return strings.Join(strings.Fields(text), " ")
}

// lastTurns returns the last n entries of history.
func lastTurns(history []string, n int) []string {
	if len(history) > n {
		return history[len(history)-n:]
	}
	return history
}

// input builds the classifier input of a turn. Text n-grams carry the wording; the extras
// carry what n-grams cannot see, namely how the turn relates to the conversation:
//
//   - overlap_context: the share of the turn's content words found in the history or the
//     carried sources (the training data has no sources, so at training time this is the
//     history alone; at run time a turn that repeats a source title's words is on that
//     subject just as if the user had said them before);
//   - overlap_last: the same against the latest turn only;
//   - novel: how many content words are new to the conversation (capped, scaled to [0, 1]);
//   - cue_*: the labelling rules' cues (anchors on shown material, anaphora, comparatives, an
//     "X or Y" choice, explicit topic shifts, follow-up openers);
//   - compare_on_topic, compare_off_topic: a comparative with and without overlap with the
//     conversation, since comparative wording on an unrelated subject is new-topic;
//   - new_domain: the turn names a service domain (restaurant, train, hotel…) its history does
//     not;
//   - short, length: the turn's length, as follow-ups tend to be short and elliptic.
func input(t Turn) classify.Input {
	history := lastTurns(t.History, historyTurns)
	text := normalize(t.Text)

	turnTerms := terms(t.Text)
	context := map[string]bool{}
	for _, h := range history {
		for _, w := range terms(h) {
			context[w] = true
		}
	}
	for _, s := range t.Sources {
		for _, w := range terms(s) {
			context[w] = true
		}
	}
	last := map[string]bool{}
	if len(history) > 0 {
		for _, w := range terms(history[len(history)-1]) {
			last[w] = true
		}
	}
	var inContext, inLast, novel int
	for _, w := range turnTerms {
		if context[w] {
			inContext++
		} else {
			novel++
		}
		if last[w] {
			inLast++
		}
	}
	tokens := len(classify.Tokenize(t.Text))
	extra := map[string]float64{
		"novel":  math.Min(float64(novel), 5) / 5,
		"length": math.Min(math.Log1p(float64(tokens))/math.Log(30), 1),
	}
	if n := len(turnTerms); n > 0 {
		extra["overlap_context"] = float64(inContext) / float64(n)
		extra["overlap_last"] = float64(inLast) / float64(n)
	}
	if tokens <= 5 {
		extra["short"] = 1
	}
	cues := []struct {
		name string
		re   *regexp.Regexp
	}{
		{"cue_anchor", anchorCue},
		{"cue_anaphora", anaphoraCue},
		{"cue_compare", compareCue},
		{"cue_or_choice", orChoiceCue},
		{"cue_shift", shiftCue},
		{"cue_follow", followOpener},
	}
	for _, c := range cues {
		if c.re.MatchString(text) {
			extra[c.name] = 1
		}
	}
	// "Different question:" announces a new topic; it is not a comparison.
	if extra["cue_compare"] == 1 && extra["cue_shift"] == 1 && !compareCue.MatchString(shiftCue.ReplaceAllString(text, " ")) {
		delete(extra, "cue_compare")
	}
	// A comparison of things the conversation has not mentioned is a new subject that happens
	// to be worded as a comparison (README: "comparative wording inside an unrelated new
	// subject is still new-topic"); a linear model needs the conjunction spelled out.
	if extra["cue_compare"] == 1 {
		extra["compare_on_topic"] = extra["overlap_context"]
		if extra["overlap_context"] == 0 && extra["cue_anaphora"] == 0 {
			extra["compare_off_topic"] = 1
		}
	}
	if domainCue.MatchString(text) {
		hist := normalize(strings.Join(history, " "))
		for _, d := range domainCue.FindAllString(text, -1) {
			if !strings.Contains(hist, strings.TrimSuffix(d, "s")) {
				extra["new_domain"] = 1
				break
			}
		}
	}
	return classify.Input{Text: t.Text, Extra: extra}
}
