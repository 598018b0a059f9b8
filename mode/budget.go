package mode

// Budgets are the token budgets of the context bundle's sections for one mode.
type Budgets struct {
	Rules             int
	TaskState         int
	RecentWindow      int
	RetrievedEvidence int
	RelevantDecisions int
	Capsules          int
}

// Total returns the sum of the section budgets.
func (b Budgets) Total() int {
	return b.Rules + b.TaskState + b.RecentWindow + b.RetrievedEvidence + b.RelevantDecisions + b.Capsules
}

// budgets is the table of DESIGN.md §2, in tokens. Each mode shifts room to what it needs:
// TASK to rules and task state, EXPLORATION and DEBUGGING to the recent window (the thread
// of ideas, the logs), LEARNING to retrieved evidence and decisions.
var budgets = map[Mode]Budgets{
	Task:        {Rules: 10000, TaskState: 5000, RecentWindow: 2000, RetrievedEvidence: 28000, RelevantDecisions: 4000, Capsules: 4000},
	Exploration: {Rules: 3000, TaskState: 1000, RecentWindow: 15000, RetrievedEvidence: 35000, RelevantDecisions: 6000, Capsules: 2000},
	Debugging:   {Rules: 5000, TaskState: 4000, RecentWindow: 12000, RetrievedEvidence: 25000, RelevantDecisions: 3000, Capsules: 0},
	Learning:    {Rules: 8000, TaskState: 0, RecentWindow: 2000, RetrievedEvidence: 40000, RelevantDecisions: 8000, Capsules: 2000},
	General:     {Rules: 6000, TaskState: 3000, RecentWindow: 8000, RetrievedEvidence: 28000, RelevantDecisions: 4000, Capsules: 4000},
}

// BudgetsFor returns the budgets of a mode; an unknown mode gets GENERAL's, the baseline.
func BudgetsFor(m Mode) Budgets {
	if b, ok := budgets[m]; ok {
		return b
	}
	return budgets[General]
}

// ScaledTo returns the budgets with every section scaled by the same factor so that they add up
// to total: the mode's way of spending tokens, at another budget. Rounding is made up in the
// retrieved evidence, so the total is exact.
func (b Budgets) ScaledTo(total int) Budgets {
	have := b.Total()
	if have == 0 || total < 0 {
		return b
	}
	scale := func(v int) int { return v * total / have }
	out := Budgets{Rules: scale(b.Rules), TaskState: scale(b.TaskState), RecentWindow: scale(b.RecentWindow),
		RetrievedEvidence: scale(b.RetrievedEvidence), RelevantDecisions: scale(b.RelevantDecisions), Capsules: scale(b.Capsules)}
	out.RetrievedEvidence += total - out.Total()
	return out
}
