package invariant

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/ragd/ragd/classify"
)

// Detect returns the sticky invariants of one user message, in message order (spans that start
// at the same byte: higher priority first).
//
// Every clause of the message gets one label from the clause model. Adjacent clauses of a line
// with the same label become one span, so a requirement and the clause that completes it ("don't
// send customer data to an external API. Everything has to stay on our own servers.") are one
// invariant. Fillers that open a span ("sorry, ", "please ") are left out of it.
//
// Blocking errors follow the labelling convention that a message reports one failure and that
// its span is the error text when one is pasted: when any clause is labelled a blocking error,
// the message's span is the most telling pasted error (a line that reads like tool output, or
// quoted text with an error in it: the exception line of a traceback, not its frames), and only
// when nothing is pasted, the first failure clause not told in the past (a report states the
// failure, then its details).
//
// A message that the mode classifier reads as DEBUGGING (P >= FailureThreshold) reports a
// current failure by the modes' labelling rule 1, and by ours that failure is a blocking error:
// when no clause reaches a threshold as one, the clause likeliest to be it is taken, however it
// is worded, unless the conventions rule it out (fixed, past, hypothetical).
func Detect(message string) []Span {
	return detect(shipped(), message, Debugging(message))
}

// labelled is a clause with the class the model gives it.
type labelled struct {
	clause
	class int     // index into classes
	p     float64 // the model's probability of class
	past  bool    // the clause itself is told in the past ("the build failed twice last week, …")
}

// detect is Detect with given models and P(DEBUGGING), so that cross-validation runs the same
// code.
func detect(m Models, msg string, debugging float64) []Span {
	cs := clauses(msg)
	mm := newMessage(msg, debugging)
	ls := make([]labelled, len(cs))
	xs := make([]instance, len(cs))
	found, rules := false, false
	for i, c := range cs {
		v := newView(msg, c, mm)
		x := instanceOf(v)
		xs[i] = x
		if x.allowed == noneOnly {
			// Every cue is ruled out by the conventions (a failure told in the past, a
			// question about a rule): nothing to weigh.
			ls[i] = labelled{clause: c, p: 1}
			continue
		}
		k, p := m.judge(x.in, x.allowed, x.cued, x.retracts)
		ls[i] = labelled{clause: c, class: k, p: p, past: v.is(pastRe, text) && !v.is(presentRe, text)}
		found = found || k == blocking
		rules = rules || classes[k] == Safety || classes[k] == Constraint
	}
	if rules && !m.ungated(msg, xs, debugging) {
		for i := range ls {
			if t := classes[ls[i].class]; t == Safety || t == Constraint {
				ls[i].class = noType
			}
		}
	}
	if debugging >= FailureThreshold && !found {
		ls = failureOf(m, ls, xs)
	}
	return assemble(msg, ls)
}

// failureOf labels as the blocking error the clause of a failing message likeliest to be one,
// among those the conventions allow.
func failureOf(m Models, ls []labelled, xs []instance) []labelled {
	best, most := -1, 0.0
	for i := range xs {
		x := &xs[i]
		if ls[i].class != noType || settled(x.v, x.v.is(questionRe, text) || x.v.is(questionRe, sentence)) {
			continue
		}
		in := x.in
		if x.allowed == noneOnly {
			in = clauseInput(x.v, x.features())
		}
		allowed, cued := x.allowed, x.cued
		if !allowed[blocking] {
			// No cue of failure: the message's failure may still be told in any words.
			allowed, cued = failureOnly, false
		}
		if p := m.failure(in, allowed, cued); p > most {
			best, most = i, p
		}
	}
	if best >= 0 {
		ls[best].class, ls[best].p = blocking, most
	}
	return ls
}

// Detect is Detect with these models and the message's P(DEBUGGING) given (see Debugging), for
// evaluating models that are not the embedded ones, or on turns the P(DEBUGGING) model was
// trained on, which need out-of-fold probabilities.
func (m Models) Detect(msg string, debugging float64) []Span { return detect(m, msg, debugging) }

// failureOnly is the candidate set of a clause that may be a failure or nothing.
var failureOnly = [len(classes)]bool{noType: true, blocking: true}

// noneOnly is the candidate set of a clause that may take no type.
var noneOnly = [len(classes)]bool{noType: true}

// instance is one clause as the models see it: their input, the types it may take, and
// whether a cue of some type fired (otherwise allowed is open's and the un-cued models judge).
type instance struct {
	in      classify.Input
	allowed [len(classes)]bool
	cued    bool
	// retracts: the clause may be a correction and says so in its own words, with no strong rule
	// word (retracts), so that a safety concept it names does not make it a safety requirement.
	retracts bool
	v        *view     // for the failure of a failing message (failureOf) and the gate
	cueVec   []float64 // the clause's cue features (features), once worked out
}

// features returns the clause's cue features, working them out once: the clause models, the
// failure of a failing message and the gate all read them.
func (x *instance) features() []float64 {
	if x.cueVec == nil {
		x.cueVec = features(x.v)
	}
	return x.cueVec
}

func instanceOf(v *view) instance {
	x := instance{allowed: noneOnly}
	var cued bool
	if x.allowed, cued = candidates(v); !cued {
		x.allowed = open(v)
	}
	x.cued = cued
	x.retracts = x.allowed[correction] && retracts(v)
	x.v = v
	if x.allowed != noneOnly {
		x.in = clauseInput(v, x.features())
	}
	return x
}

// clauseFeatures cuts msg into clauses and returns each as the models see it, for training;
// debugging is the message's P(DEBUGGING).
func clauseFeatures(msg string, debugging float64) ([]clause, []instance) {
	cs := clauses(msg)
	m := newMessage(msg, debugging)
	xs := make([]instance, len(cs))
	for i, c := range cs {
		xs[i] = instanceOf(newView(msg, c, m))
	}
	return cs, xs
}

// assemble turns labelled clauses into spans.
func assemble(msg string, ls []labelled) []Span {
	var spans []Span
	if s, ok := keyFailure(msg, ls); ok {
		spans = append(spans, s)
	}
	for i := 0; i < len(ls); {
		t := classes[ls[i].class]
		j := i
		for j+1 < len(ls) && ls[j+1].class == ls[i].class && ls[j+1].Line == ls[i].Line {
			j++
		}
		end := ls[j].End
		if t == Correction && len(strings.Fields(msg[ls[i].Start:end])) <= 4 &&
			j+1 < len(ls) && classes[ls[j+1].class] == "" && ls[j+1].Line == ls[i].Line {
			// "Are you sure? I am pretty sure you can get a permit at 15.": a bare challenge
			// says that something is wrong; the clause after it says what is right.
			j++
			end = ls[j].End
		}
		if t != "" && t != Blocking {
			spans = append(spans, span(msg, t, dropFiller(msg, segment{ls[i].Start, end})))
		}
		i = j + 1
	}
	slices.SortStableFunc(spans, func(a, b Span) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.Type.Priority(), a.Type.Priority()))
	})
	return spans
}

func span(msg string, t Type, s segment) Span {
	return Span{Type: t, Text: msg[s.Start:s.End], Start: s.Start, End: s.End}
}

// spanFiller opens a clause without being part of the invariant: politeness, hesitation and
// the announcement of a typo ("sorry, typo: it's RERANK_TOP_N").
var spanFiller = regexp.MustCompile(`^(?i:(?:sorry|excuse me|please|pls|plz|wait|hmm+|nope|ok(?:ay)?|yes|yeah|thanks|thank you|btw|well|my bad|typo|one thing though|also|just)\b[\s,:.!]*)+`)

// dropFiller narrows s past the fillers that open it, unless nothing would be left.
func dropFiller(msg string, s segment) segment {
	n := len(spanFiller.FindString(msg[s.Start:s.End]))
	if n > 0 && n < s.End-s.Start {
		s.Start += n
	}
	return s
}

// keyFailure returns the one blocking-error span of a message, if any clause is labelled one.
func keyFailure(msg string, ls []labelled) (Span, bool) {
	sure := -1
	for i, l := range ls {
		if classes[l.class] == Blocking && (sure < 0 || ls[sure].past && !l.past) {
			sure = i
		}
	}
	if sure < 0 {
		return Span{}, false
	}
	var best segment
	bestScore := 0
	for _, l := range ls {
		if t := classes[l.class]; t != "" && t != Blocking {
			continue // quoted text in a requirement is not the failure ("never log 'invalid password'")
		}
		seg, score := pastedError(msg, l.clause)
		if score > bestScore || score == bestScore && score > 0 && seg.End-seg.Start > best.End-best.Start {
			best, bestScore = seg, score
		}
	}
	if bestScore == 0 {
		best = dropFiller(msg, ls[sure].segment)
	}
	return span(msg, Blocking, best), true
}

var (
	// quotedText is text in `backticks`, "double quotes" or 'single quotes'; a single quote
	// must follow a space, a bracket or a colon, so that apostrophes do not open quotes.
	quotedText = regexp.MustCompile("`[^`]+`|\"[^\"]+\"|(?:^|[\\s(:])('[^']{3,}')")
	// errorStart is where the record of an error begins inside a line of output: after it,
	// the line is the error ("terraform apply: Error acquiring the state lock").
	errorStart = regexp.MustCompile(`\b(?:\w+\.)*[A-Z]\w*(?:Error|Exception)\b|\bnpm ERR!|\bFAILED\b|\bFATAL\b|\bpanic:|\bfatal:|\b[Ee]rror(?:\[\w+\])?:|\bError\b|\b[A-Z_]+_(?:FAILED|ERROR|DENIED|REFUSED|TIMEOUT|INVALID)\b`)
	// errorText is what makes quoted text an error message rather than a name or a command.
	errorText = regexp.MustCompile(`(?i)error|exception|fail|fatal|panic|denied|refused|rejected|invalid|unable|cannot|can't|could not|not found|no such|died|timed out|\w: \w|[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Off|Killed|Failed|Denied)\b`)
)

// outputPrefix reports whether p, the text before an error name, is what tools print before
// their errors: nothing, or a short label ending in ": ", "| " or "$ " ("api-1  | ",
// "terraform apply: "), rather than a sentence that mentions the error.
func outputPrefix(p string) bool {
	if p == "" || strings.TrimSpace(p) == "" {
		return true
	}
	return len(p) <= 30 && (strings.HasSuffix(p, ": ") || strings.HasSuffix(p, "| ") || strings.HasSuffix(p, "$ "))
}

// pastedError finds error text pasted into clause c and says how telling it is: 0 for none;
// 1 for quoted text that reads like an error, or an error as tools print it; one more if it names
// an error class ("KeyError", "npm ERR!", "FAILED"), and one more if a message follows the name
// ("KeyError: 'embedding'" tells more than "Traceback (most recent call last)").
func pastedError(msg string, c clause) (segment, int) {
	text := msg[c.Start:c.End]
	var seg segment
	found := false
	for _, m := range quotedText.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if m[2] >= 0 {
			start, end = m[2], m[3]
		}
		if errorText.MatchString(text[start:end]) && (!found || end-start > seg.End-seg.Start) {
			seg, found = segment{c.Start + start, c.Start + end}, true
		}
	}
	if loc := errorStart.FindStringIndex(text); !found && loc != nil && outputPrefix(text[:loc[0]]) {
		seg, found = segment{c.Start + loc[0], c.End}, true
	}
	if !found {
		return segment{}, 0
	}
	score := 1
	record := msg[seg.Start:seg.End]
	if loc := errorStart.FindStringIndex(record); loc != nil {
		score++
		if strings.Contains(record[loc[1]:], " ") {
			score++
		}
	}
	return seg, score
}
