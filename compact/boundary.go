package compact

import (
	"fmt"
	"regexp"
	"strings"
)

// Signals are what a goal boundary is decided from.
type Signals struct {
	// Text is the user's message.
	Text string
	// Goal holds the current goal's messages so far, user and assistant, oldest first; empty
	// for a conversation's first message.
	Goal []Message
	// NewTopic is the turn-intent classifier's probability that the message opens a new
	// topic, or negative when no classifier ran.
	NewTopic float64
	// Focus names what the conversation is about (entities, subjects), when known: its words
	// count as already mentioned.
	Focus []string
}

// Boundary is the decision for one user message.
type Boundary struct {
	// New says the message starts a new goal, which finishes the current one.
	New bool
	// Confidence is the detector's score that the message starts a new goal, 0..1; New is
	// Confidence >= the detector's threshold.
	Confidence float64
	// Reason says shortly why.
	Reason string
}

// Detector decides goal boundaries.
type Detector interface {
	Detect(Signals) Boundary
}

// DefaultThreshold is the confidence at which Shift calls a new goal.
const DefaultThreshold = 0.7

// Shift is the default detector. A message starts a new goal when it asks for something (a
// request or a question) that names something the current goal has not mentioned (a content
// word that is not a value such as a number, time or day, absent from the goal's messages and
// the focus), and the turn-intent classifier takes it for a new topic. Its score is then the
// classifier's probability of a new topic; a message that asks for nothing new gets half of
// that. Without a classifier, a message that asks for something new scores 0.5, and 0.75 when it
// says it is another request ("also", "as well", "another").
//
// The gate keeps the classifier from splitting a goal at every constraint a user adds ("for 3
// people on friday" is new words, but values), and at small talk ("thank you, goodbye").
type Shift struct {
	// Threshold is the score from which a message starts a goal (DefaultThreshold when 0).
	Threshold float64
}

var (
	// request finds a message asking for something.
	request = regexp.MustCompile(`(?i)\b(?:look(?:ing)? for|need|want|would like|'d like|like to|find|book|reserve|recommend|suggest|interested in|information (?:on|about)|help|how about|what about|is there|are there|get me|search|show me|tell me about|explain)\b`)
	// question finds a question.
	question = regexp.MustCompile(`(?i)(?:\?|^\s*(?:what|which|who|where|when|why|how|is|are|can|could|do|does|would|will)\b)`)
	// another finds a message that says it adds a request.
	another = regexp.MustCompile(`(?i)\b(?:also|as well|another|in addition|one more thing)\b`)
)

// Detect scores the message (see Shift).
func (s Shift) Detect(sig Signals) Boundary {
	if len(sig.Goal) == 0 {
		return Boundary{New: true, Confidence: 1, Reason: "first message"}
	}
	th := s.Threshold
	if th == 0 {
		th = DefaultThreshold
	}
	seen := map[string]bool{}
	for _, m := range sig.Goal {
		for _, w := range words(m.Text) {
			seen[w] = true
		}
	}
	for _, f := range sig.Focus {
		for _, w := range words(f) {
			seen[w] = true
		}
	}
	asks := request.MatchString(sig.Text) || question.MatchString(sig.Text)
	fresh := novel(sig.Text, seen)
	gate := asks && len(fresh) > 0
	var score float64
	var why string
	switch {
	case sig.NewTopic >= 0 && gate:
		score, why = sig.NewTopic, fmt.Sprintf("new topic %.2f", sig.NewTopic)
	case sig.NewTopic >= 0:
		score, why = sig.NewTopic/2, fmt.Sprintf("new topic %.2f, halved", sig.NewTopic)
	case gate && another.MatchString(sig.Text):
		score, why = 0.75, "another request"
	case gate:
		score, why = 0.5, "a request"
	default:
		score = 0.1
	}
	switch {
	case gate:
		why += "; names " + strings.Join(fresh[:min(len(fresh), 3)], ", ")
	case asks:
		why = strings.TrimPrefix(why+"; names nothing new", "; ")
	default:
		why = strings.TrimPrefix(why+"; asks for nothing", "; ")
	}
	return Boundary{New: score >= th, Confidence: score, Reason: why}
}
