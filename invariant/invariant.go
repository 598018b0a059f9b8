// Package invariant finds sticky invariants in user messages: the safety requirements,
// corrections, hard constraints and blocking errors that a conversation must keep in front of
// its LLM on every later turn, however the context is trimmed.
//
// Detection is cheap: a message is cut into clauses, and each is judged in two steps, "sticky
// or not" first and the type second (model.go), by two small logistic regressions over the
// clause's words, its sentence's words and cues written from the labelling conventions
// (../shared/data/labels/README.md §2). The cues also say which types a clause may take at all,
// conventions no weight should overrule: a question or "it's not required" is no requirement, a
// failure that is fixed, hypothetical or told only in the past ("the build failed twice last
// week") is not blocking. The decision favours recall where a miss costs most: a clause is
// sticky at a probability of 0.3. Clauses are judged alone, so a third model reads the whole
// message: one that almost surely holds no rule (a bug report's "it only happens on CI") keeps
// no safety requirement or hard constraint. A message that the mode classifier reads as
// DEBUGGING reports a current failure, so it gets one even when no clause reaches a threshold:
// the clause likeliest to be it (Detect). Spans are then put together: adjacent clauses of one type merge, and a
// message's blocking error is its pasted error text when it has one.
//
// The models are trained by `go generate ./invariant` on every labelled file (Data): the rows of
// invariants_train.jsonl, the turns of modes_train.jsonl labelled for invariants, real turns,
// and the extra rows of data/invariants_extra.jsonl (real MultiWOZ and MTRAG turns and messages
// written for coverage; see data/README.md). The trainer prints grouped cross-validation by file;
// data/invariants_check.jsonl is never trained on, and `ragd eval classifiers --invariants FILE`
// scores the shipped models on it or on any labelled file.
package invariant

// Type is the kind of a sticky invariant.
type Type string

// The types of sticky invariant, as the labelling conventions define them.
const (
	// Safety is a constraint whose purpose is safety, security or privacy: "never log the access
	// token", "keep the data in the EU", an allergy the answers must respect.
	Safety Type = "safety_requirement"
	// Correction is the user correcting an earlier statement or assumption, theirs or the
	// assistant's: "no, use LDAP, not OAuth", "I meant saturn".
	Correction Type = "user_correction"
	// Constraint is an explicit, non-negotiable requirement on the solution that is not about
	// safety: "the image must stay under 500MB", "no later than 09:45".
	Constraint Type = "hard_constraint"
	// Blocking is a current failure that blocks progress: the pasted error line, or the clause
	// that reports the failure.
	Blocking Type = "blocking_error"
)

// Types lists the invariant types in priority order, highest first.
var Types = []Type{Safety, Correction, Constraint, Blocking}

// Priority orders invariants when a bundle has to choose: safety first, then the latest
// correction, hard constraints, and blocking errors. An unknown type has priority 0.
func (t Type) Priority() int {
	switch t {
	case Safety:
		return 1000
	case Correction:
		return 900
	case Constraint:
		return 800
	case Blocking:
		return 700
	}
	return 0
}

// Span is one invariant found in a message. Start and End are byte offsets into the message, so
// message[Start:End] == Text.
type Span struct {
	Type       Type
	Text       string
	Start, End int
}

// Invariant is a detected span tied to the conversation turn it came from.
type Invariant struct {
	Type      Type
	Text      string
	Turn      int
	MessageID string
	Priority  int
}

// Message is one user message of a conversation.
type Message struct {
	ID   string
	Turn int
	Text string
	// Spans are the message's detected spans when they were kept from an earlier Detect;
	// nil runs Detect again. Detect costs milliseconds on a pasted log, and a conversation's
	// messages are read every turn.
	Spans []Span
}
