package intent

import "slices"

// MinNewTopic is the probability of new-topic under which the guard never lets a turn drop the
// conversation's sources, whatever its evidence.
const MinNewTopic = 0.5

// Guard patterns, matched against the normalized turn (see normalize).
var (
	// announceCue is the user saying in so many words that a new subject starts. It is the only
	// thing that makes a turn new-topic against the classifier, and then only with the evidence.
	// "back to X" is not one: it returns to something, which may be what is carried.
	announceCue = anyOf(
		words(`(?:a )?(?:new|different|another|unrelated|separate|other) (?:topic|subject|question)`),
		words(`chang\w* (?:of |the |a little(?: bit)? (?:of )?)?(?:the )?(?:topic|subject)`),
		words(`on (?:another|a different) note`, `switching (?:topics?|gears|subjects?)`, `unrelated(?:,? but)?`),
	)
	// backRefCue points at what the conversation already has: the anchors of same-sources and
	// "the same …" ("go back to those same documents").
	backRefCue = anyOf(anchorCue.String(), words(`(?:th(?:ose|ese|at|is|e)) same`, `same (?:documents?|docs?|sources?|results?|ones?|articles?|pages?|links?|files?)`))
	// pronounCue is a pronoun standing for something the conversation named: "are their
	// bathrooms clean?", "does it have parking?".
	pronounCue = anyOf(words(`it`, `its`, `they`, `them`, `their`, `theirs`, `he`, `she`, `him`, `his`, `her`))
	// sourceCue points at a shown source by what it is ("that article", "the second result",
	// "those same documents"), which tells where to look; the other anchors ("you mentioned",
	// "clarify", "here") say that the turn is about what was said, not which source.
	sourceCue = anyOf(words(
		`(?:in |from )?(?:th(?:at|is|ose|ese)|the same|same) (?:documents?|docs?|pages?|articles?|sources?|results?|links?|passages?|lists?|websites?|sites?|rfcs?|policy|policies|contracts?|whitepapers?|postmortems?)`,
		`the (?:first|second|third|last|top) (?:one|result|link|source|article|document|entry|item|option)`,
		`(?:first|second|third) one`, `one listed`, `page \d+`, `section \d+`))
	// ellipticOpener opens a turn that continues the previous one: "Any maintenance needed?",
	// "and the cost?", "what about Paris?". With few content words of its own such a turn has
	// no subject apart from the conversation's.
	ellipticOpener = anyOf(opening(`and`, `also`, `so`, `then`, `but`, `or`, `any`, `anything`, `what about`,
		`how about`, `what else`, `what if`, `why`, `how come`, `more`, `same`, `which`, `is there`, `are there`))
)

// maxEllipticTerms is how many content words an elliptic opener may have and still lean on the
// conversation for its subject.
const maxEllipticTerms = 2

// Evidence is why the guard let a turn be new-topic or not.
type Evidence string

// The guard's reasons.
const (
	// EvidenceNewSubject: the turn names a subject the conversation does not contain.
	EvidenceNewSubject Evidence = "new subject"
	// Otherwise the turn is kept on the conversation's sources because it …
	EvidenceShared    Evidence = "shares terms with the conversation"
	EvidenceBackRef   Evidence = "refers back to what was shown"
	EvidencePronoun   Evidence = "stands a pronoun for what the conversation named"
	EvidenceElliptic  Evidence = "has no subject of its own"
	EvidenceNoSubject Evidence = "has no content words"
	EvidenceUnsure    Evidence = "new-topic is not probable enough"
)

// Guard decides whether a turn may be new-topic, the intent that drops every carried source and
// so the costliest to get wrong, and whether it may be same-sources, the intent that narrows
// retrieval to the carried sources. It is a pure function of the turn (its text, the titles it
// names, and the context whose words it may share: the previous user turns, the carried
// sources' titles and facts, the conversation's focus terms) and the classifier's probabilities.
//
// A turn is new-topic when it is confident and has evidence. Confidence: new-topic has at least
// MinNewTopic probability and is the most probable label, or the user announces a new subject
// ("New topic.", "different question:"). Evidence: once the announcement is cut out, the turn
// has content words and shares none with the context, does not refer back to what was shown
// ("those same documents", "you mentioned") and is not an elliptic continuation ("Any
// maintenance needed?"). Anything else that the classifier called new-topic becomes its most
// probable other label, all of which keep the carried sources. Same-sources likewise needs the
// turn to refer back to what was shown, and a turn that names a title of the corpus to point at
// a shown source; without that it is a drill-down (see sameSources).
//
// The returned Result's probabilities are the classifier's; Confidence is the chosen label's.
func Guard(t Turn, probs map[Label]float64) (Result, Evidence) {
	r := Result{Label: argmax(probs, ""), Probs: probs}
	r.Raw = r.Label
	norm := normalize(t.Text)
	announced := announceCue.MatchString(norm)
	confident := announced || (r.Label == NewTopic && probs[NewTopic] >= MinNewTopic)
	ev := newTopicEvidence(announceCue.ReplaceAllString(norm, " "), contextOf(t))
	switch {
	case confident && ev == EvidenceNewSubject:
		r.Label = NewTopic
	case r.Label == NewTopic:
		r.Label = argmax(probs, NewTopic)
		if ev == EvidenceNewSubject {
			ev = EvidenceUnsure
		}
	}
	if r.Label == SameSources && !sameSources(norm, t.Titles) {
		r.Label = DrillDown
	}
	r.Confidence = probs[r.Label]
	return r, ev
}

// sameSources says whether a (normalized) turn that the classifier calls same-sources may narrow
// retrieval to what was found before: the second costliest error, on a turn that asks something
// new about the conversation's subject. Otherwise the turn is a drill-down, which keeps the
// carried sources and searches afresh too.
//
// The turn must anchor on what was shown ("that article", "you mentioned"). A turn that names a
// title of the corpus asks about that title, whose documents fresh retrieval finds (on a corpus of
// one document per review, the carried documents are a few reviews of it): it stays same-sources
// only when it points at a shown source by what it is ("in that article, is Hobsons House
// quiet?"), where the user says where to look and the title is what to look for there, as
// refer reads such a turn when the conversation showed that source. A looser anchor does not
// say which source ("you mentioned Hobsons House: is it quiet?").
func sameSources(norm string, titles []string) bool {
	if !backRefCue.MatchString(norm) {
		return false
	}
	return len(titles) == 0 || sourceCue.MatchString(norm)
}

// newTopicEvidence says whether a (normalized, announcement-free) turn names a subject of its
// own, apart from the context's.
func newTopicEvidence(text string, context []string) Evidence {
	if backRefCue.MatchString(text) {
		return EvidenceBackRef
	}
	if pronounCue.MatchString(text) {
		return EvidencePronoun
	}
	own := terms(text)
	if len(own) == 0 {
		return EvidenceNoSubject
	}
	if ellipticOpener.MatchString(text) && len(own) <= maxEllipticTerms {
		return EvidenceElliptic
	}
	ctx := map[string]bool{}
	for _, c := range context {
		for _, w := range terms(c) {
			ctx[w] = true
		}
	}
	for _, w := range own {
		if ctx[w] {
			return EvidenceShared
		}
	}
	return EvidenceNewSubject
}

// argmax returns the most probable label other than except, ties broken by the order of Labels
// so that the answer does not depend on map order.
func argmax(probs map[Label]float64, except Label) Label {
	best := Label("")
	for _, l := range Labels {
		if l == except {
			continue
		}
		if best == "" || probs[l] > probs[best] {
			best = l
		}
	}
	return best
}

// contextOf is what a turn may share with its conversation: the user turns the classifier sees,
// the carried sources and the focus terms. Older turns are left out for the reason the
// classifier leaves them out: their sources have stopped being carried.
func contextOf(t Turn) []string {
	ctx := slices.Clone(lastTurns(t.History, historyTurns))
	ctx = append(ctx, t.Sources...)
	return append(ctx, t.Focus...)
}
