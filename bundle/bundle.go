// Package bundle builds the context bundle that a chat UI hands to its LLM with each turn: the
// conversation's rules, task state, recent turns, retrieved evidence, decisions and summaries of
// earlier goals, each section cut to the token budget of the turn's interaction mode.
//
// Sticky invariants (package invariant) are the exception to every budget: they are placed first
// in the rules section before anything is cut, and they are never cut. If they alone exceed the
// rules budget, the section's Used exceeds its Budget and the bundle says so rather than hide it.
// Missing checks the promise from outside, so that a caller can fall back to the GENERAL budgets
// and count the breach.
//
// Budgets are cl100k_base tokens (package token), counted on each item as rendered; the section
// headers and the blank lines between sections are framing and are not charged to any budget.
//
// Cutting follows one rule everywhere: whole items are dropped before any item is truncated, and
// an item is truncated only when it is the first of its section, the section would otherwise be
// empty, and the budget is not zero; then it is cut to the budget with token.Truncate (a too-long
// latest turn is better read in part than not at all). Sections that take a contiguous run (the
// recent window, decisions, capsules: a gap would leave the model reading a conversation with
// holes in it) stop at the first item that does not fit; the others (rules, task state, evidence)
// go on to later, smaller items.
package bundle

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/token"
)

// Budgets are the token budgets of the six sections. The spec's table per mode is
// mode.BudgetsFor; its Budgets converts to this type: bundle.Budgets(mode.BudgetsFor(m)).
type Budgets struct {
	Rules, TaskState, RecentWindow, RetrievedEvidence, RelevantDecisions, Capsules int
}

// Total returns the sum of the section budgets.
func (b Budgets) Total() int {
	return b.Rules + b.TaskState + b.RecentWindow + b.RetrievedEvidence + b.RelevantDecisions + b.Capsules
}

// Section names, in bundle order.
const (
	Rules             = "rules"
	TaskState         = "task_state"
	RecentWindow      = "recent_window"
	RetrievedEvidence = "retrieved_evidence"
	RelevantDecisions = "relevant_decisions"
	Capsules          = "capsules"
)

// Item kinds.
const (
	KindInvariant = "invariant"
	KindRule      = "rule"
	KindGoal      = "goal"
	KindPending   = "pending"
	KindDone      = "done"
	KindTurn      = "turn"
	KindFact      = "fact"
	KindPassage   = "passage"
	KindDecision  = "decision"
	KindCapsule   = "capsule"
)

// Turn is one message of the conversation.
type Turn struct {
	Turn int
	Role string // "user" or "assistant"
	Text string
}

// Evidence is one fact of the turn's fact sheet with the passage it cites.
type Evidence struct {
	Marker  string // "A1"
	Fact    string
	Title   string
	Date    string
	Passage string // the cited chunk's text
	Rank    int
}

// Input is everything a bundle is built from.
type Input struct {
	// Mode is the interaction mode the budgets come from, kept for the record.
	Mode    string
	Budgets Budgets
	// Invariants are the conversation's sticky invariants: always in rules, first, in priority
	// order (highest first, then latest turn first), never cut.
	Invariants []invariant.Invariant
	// Rules are the operator's configured rules, after the invariants, cut to the budget.
	Rules []string
	// Goal is the current goal, e.g. the first user message of the current goal segment.
	Goal string
	// Pending and Done are task state lines. Pending comes before Done: when the budget is
	// short, what is left to do matters more than what is finished.
	Pending, Done []string
	// Recent is the conversation so far, oldest first. The recent window takes the latest turns
	// verbatim, newest first, until the budget.
	Recent []Turn
	// Evidence is in rank order: every fact line first, then the cited passages in rank order,
	// until the budget.
	Evidence []Evidence
	// Decisions are the decisions stated in the conversation, most recent last (see Decisions).
	Decisions []string
	// Capsules summarise finished goals, oldest first (see package compact).
	Capsules []string
}

// Item is one entry of a section. Text is the entry as rendered in Bundle.Text and Tokens its
// token count.
type Item struct {
	Kind   string
	Text   string
	Tokens int
	Sticky bool
}

// Section is one section of the bundle.
type Section struct {
	Name   string
	Budget int
	// Used is the tokens of the section's items. It exceeds Budget only in the rules section,
	// when the sticky invariants alone do.
	Used  int
	Items []Item
	// Cut says, shortly, what did not fit and why: "3 older turns", "passage B2 (412 tokens)",
	// "turn 7 truncated to 800 of 2100 tokens".
	Cut []string
}

// Bundle is the context bundle of one turn.
type Bundle struct {
	Mode         string
	BudgetTokens int // the sum of the section budgets
	UsedTokens   int // the sum of the sections' Used
	Sections     []Section
	Invariants   []invariant.Invariant // the sticky invariants, in the order they were placed
	// Text is the rendered bundle: each non-empty section under a "## name" header, ready to
	// paste into a system prompt.
	Text string
}

// Build makes the bundle of in. It is a pure function of its input.
func Build(in Input) Bundle {
	invs := slices.Clone(in.Invariants)
	slices.SortStableFunc(invs, func(a, b invariant.Invariant) int {
		return cmp.Or(cmp.Compare(priority(b), priority(a)), cmp.Compare(b.Turn, a.Turn))
	})

	sections := []Section{
		rules(in.Budgets.Rules, invs, in.Rules),
		taskState(in.Budgets.TaskState, in.Goal, in.Pending, in.Done),
		recentWindow(in.Budgets.RecentWindow, in.Recent),
		evidence(in.Budgets.RetrievedEvidence, in.Evidence),
		newest(RelevantDecisions, KindDecision, "decision", in.Budgets.RelevantDecisions, in.Decisions),
		newest(Capsules, KindCapsule, "capsule", in.Budgets.Capsules, in.Capsules),
	}
	b := Bundle{Mode: in.Mode, BudgetTokens: in.Budgets.Total(), Sections: sections, Invariants: invs}
	for _, s := range sections {
		b.UsedTokens += s.Used
	}
	b.Text = Render(sections)
	return b
}

// Missing returns the invariants of priority 800 or more (safety requirements, the correction,
// hard constraints) that do not appear verbatim in an item of b's rules section. Build never
// leaves one out; a non-empty result means the bundle was built some other way or changed
// afterwards, and the caller should rebuild with the GENERAL budgets and count the breach.
func Missing(b Bundle, invs []invariant.Invariant) []invariant.Invariant {
	var items []Item
	for _, s := range b.Sections {
		if s.Name == Rules {
			items = append(items, s.Items...)
		}
	}
	var out []invariant.Invariant
	for _, inv := range invs {
		if priority(inv) < invariant.Constraint.Priority() {
			continue
		}
		if !slices.ContainsFunc(items, func(it Item) bool { return strings.Contains(it.Text, inv.Text) }) {
			out = append(out, inv)
		}
	}
	return out
}

// priority is the invariant's priority, or its type's when the field was left zero.
func priority(inv invariant.Invariant) int {
	if inv.Priority != 0 {
		return inv.Priority
	}
	return inv.Type.Priority()
}

// bullet renders text as a list item, its later lines indented under the first.
func bullet(text string) string {
	return "- " + strings.ReplaceAll(text, "\n", "\n  ")
}

func newItem(kind, text string) Item {
	return Item{Kind: kind, Text: text, Tokens: token.Count(text)}
}

// rules places the invariants, then as many configured rules as fit in what they leave.
func rules(budget int, invs []invariant.Invariant, configured []string) Section {
	s := Section{Name: Rules, Budget: budget}
	for _, inv := range invs {
		it := newItem(KindInvariant, fmt.Sprintf("- [%s] %s", inv.Type, inv.Text))
		it.Sticky = true
		s.Items = append(s.Items, it)
		s.Used += it.Tokens
	}
	var cands []Item
	for _, r := range configured {
		cands = append(cands, newItem(KindRule, bullet(r)))
	}
	s.Cut = appendCount(s.Cut, fill(&s, cands, false), "rule", "rules")
	return s
}

// taskState places the goal, then pending lines, then done lines.
func taskState(budget int, goal string, pending, done []string) Section {
	s := Section{Name: TaskState, Budget: budget}
	var cands []Item
	if goal != "" {
		cands = append(cands, newItem(KindGoal, "Goal: "+goal))
	}
	for _, p := range pending {
		cands = append(cands, newItem(KindPending, "Pending: "+p))
	}
	for _, d := range done {
		cands = append(cands, newItem(KindDone, "Done: "+d))
	}
	dropped := fill(&s, cands, false)
	for _, kind := range []string{KindGoal, KindPending, KindDone} {
		of := slices.DeleteFunc(slices.Clone(dropped), func(it Item) bool { return it.Kind != kind })
		s.Cut = appendCount(s.Cut, of, kind, kind+" lines")
	}
	return s
}

// recentWindow places the latest turns, newest first, up to the first that does not fit. Turns
// are measured (tokenized) only as far as the window reaches, so a long conversation costs what
// its window holds, not what it has said.
func recentWindow(budget int, turns []Turn) Section {
	s := Section{Name: RecentWindow, Budget: budget}
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		it := newItem(KindTurn, fmt.Sprintf("[turn %d] %s: %s", t.Turn, t.Role, t.Text))
		if dropped := fill(&s, []Item{it}, true); len(dropped) > 0 {
			s.Cut = append(s.Cut, plural(i+1, "older turn", "older turns"))
			break
		}
	}
	return s
}

// evidence places every fact line, then the cited passages in rank order. Facts that cite the
// same passage share one copy of it.
func evidence(budget int, ev []Evidence) Section {
	s := Section{Name: RetrievedEvidence, Budget: budget}
	ev = slices.Clone(ev)
	slices.SortStableFunc(ev, func(a, b Evidence) int { return cmp.Compare(a.Rank, b.Rank) })

	// cited is one passage and the markers of the facts that cite it.
	type cited struct {
		first   Evidence
		markers []string
	}
	var facts []Item
	var cites []cited
	at := map[string]int{} // passage text -> index in cites
	for _, e := range ev {
		if e.Fact != "" {
			facts = append(facts, newItem(KindFact, fmt.Sprintf("[%s] %s%s", e.Marker, e.Fact, source(e))))
		}
		if e.Passage == "" {
			continue
		}
		if i, ok := at[e.Passage]; ok {
			cites[i].markers = append(cites[i].markers, e.Marker)
			continue
		}
		at[e.Passage] = len(cites)
		cites = append(cites, cited{first: e, markers: []string{e.Marker}})
	}
	passages := make([]Item, len(cites))
	for i, c := range cites {
		passages[i] = newItem(KindPassage, fmt.Sprintf("[%s] passage%s:\n%s", strings.Join(c.markers, ", "), source(c.first), c.first.Passage))
	}

	s.Cut = appendCount(s.Cut, fill(&s, facts, false), "fact", "facts")
	for _, it := range fill(&s, passages, false) {
		s.Cut = append(s.Cut, fmt.Sprintf("%s (%d tokens)", describe(it), it.Tokens))
	}
	return s
}

// source is the " (Title, Date)" that follows a fact, or "" when both are empty.
func source(e Evidence) string {
	var parts []string
	for _, p := range []string{e.Title, e.Date} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// newest places the latest entries of a list kept oldest first, up to the first that does not
// fit, and renders them oldest first again: decisions and summaries read in the order they
// happened.
func newest(name, kind, what string, budget int, list []string) Section {
	s := Section{Name: name, Budget: budget}
	var cands []Item
	for i := len(list) - 1; i >= 0; i-- {
		cands = append(cands, newItem(kind, bullet(list[i])))
	}
	if dropped := fill(&s, cands, true); len(dropped) > 0 {
		s.Cut = append(s.Cut, plural(len(dropped), "older "+what, "older "+what+"s"))
	}
	slices.Reverse(s.Items)
	return s
}

// fill adds candidates to s, in order, while they fit in s.Budget - s.Used, and returns those it
// dropped. With contiguous, the first candidate that does not fit ends the section; otherwise
// later, smaller ones still get their chance. A first candidate that does not fit into an empty
// section with a budget is truncated to the budget instead (see the package comment), with a
// note in s.Cut.
func fill(s *Section, cands []Item, contiguous bool) (dropped []Item) {
	for i, it := range cands {
		room := s.Budget - s.Used
		switch {
		case it.Tokens <= room:
			s.Items = append(s.Items, it)
			s.Used += it.Tokens
			continue
		case i == 0 && len(s.Items) == 0 && room > 0:
			cut := truncate(it, room)
			s.Items = append(s.Items, cut)
			s.Used += cut.Tokens
			s.Cut = append(s.Cut, fmt.Sprintf("%s truncated to %d of %d tokens", describe(it), cut.Tokens, it.Tokens))
			continue
		}
		if contiguous {
			return append(dropped, cands[i:]...)
		}
		dropped = append(dropped, it)
	}
	return dropped
}

// truncate cuts it to at most max tokens.
func truncate(it Item, max int) Item {
	it.Text = token.Fit(it.Text, max)
	it.Tokens = token.Count(it.Text)
	return it
}

// describe names an item in a Cut note: "turn 7", "passage A1", or its kind.
func describe(it Item) string {
	switch it.Kind {
	case KindTurn:
		var n int
		if _, err := fmt.Sscanf(it.Text, "[turn %d]", &n); err == nil {
			return fmt.Sprintf("turn %d", n)
		}
	case KindPassage, KindFact:
		if end := strings.IndexByte(it.Text, ']'); it.Text != "" && it.Text[0] == '[' && end > 0 {
			return it.Kind + " " + it.Text[1:end]
		}
	}
	return it.Kind
}

// appendCount appends "N things (T tokens)" to cut for the dropped items, if any.
func appendCount(cut []string, dropped []Item, one, many string) []string {
	if len(dropped) == 0 {
		return cut
	}
	total := 0
	for _, it := range dropped {
		total += it.Tokens
	}
	return append(cut, fmt.Sprintf("%s (%d tokens)", plural(len(dropped), one, many), total))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Render writes the sections that have items, each under its "## name" header, separated by
// blank lines: Bundle.Text is Render of all of them.
func Render(sections []Section) string {
	var b strings.Builder
	size := 0
	for _, s := range sections {
		size += len(s.Name) + 5
		for _, it := range s.Items {
			size += len(it.Text) + 1
		}
	}
	b.Grow(size) // the evidence alone is a few kilobytes: grown step by step, it was copied each time
	for _, s := range sections {
		if len(s.Items) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## %s\n", s.Name)
		for _, it := range s.Items {
			b.WriteString(it.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}
