package bundle

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/token"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// general is the GENERAL row of DESIGN.md §2.
var general = Budgets{Rules: 6000, TaskState: 3000, RecentWindow: 8000, RetrievedEvidence: 28000, RelevantDecisions: 4000, Capsules: 4000}

var (
	safety     = invariant.Invariant{Type: invariant.Safety, Text: "Never log the access token, not even at debug level.", Turn: 2, MessageID: "m2", Priority: 1000}
	correction = invariant.Invariant{Type: invariant.Correction, Text: "it's Python 3.8 on the servers, not 3.11", Turn: 5, MessageID: "m5", Priority: 900}
	constraint = invariant.Invariant{Type: invariant.Constraint, Text: "the image must stay under 500MB", Turn: 1, MessageID: "m1", Priority: 800}
	blocking   = invariant.Invariant{Type: invariant.Blocking, Text: "`KeyError: 'embedding'`", Turn: 4, MessageID: "m4", Priority: 700}
)

// section returns the section of b named name.
func section(t *testing.T, b Bundle, name string) Section {
	t.Helper()
	for _, s := range b.Sections {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no section %q", name)
	return Section{}
}

func texts(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Text)
	}
	return out
}

// build builds in and fails unless the bundle's numbers add up: items count their own tokens,
// sections sum their items, the bundle sums its sections, and only sticky items can take a
// section over budget.
func build(t *testing.T, in Input) Bundle {
	t.Helper()
	b := Build(in)
	require.Equal(t, in.Budgets.Total(), b.BudgetTokens)
	names := []string{Rules, TaskState, RecentWindow, RetrievedEvidence, RelevantDecisions, Capsules}
	require.Len(t, b.Sections, len(names))
	used := 0
	for i, s := range b.Sections {
		require.Equal(t, names[i], s.Name, "section order")
		sum, sticky := 0, 0
		for _, it := range s.Items {
			require.Equal(t, token.Count(it.Text), it.Tokens, "item %q", it.Text)
			sum += it.Tokens
			if it.Sticky {
				sticky += it.Tokens
			}
		}
		require.Equal(t, sum, s.Used, "section %s", s.Name)
		require.LessOrEqual(t, s.Used-sticky, max(s.Budget-sticky, 0), "section %s: only sticky items may exceed the budget", s.Name)
		used += s.Used
	}
	require.Equal(t, used, b.UsedTokens)
	return b
}

// sectionCase is one budget of one section: the items the section keeps and what it says it cut.
type sectionCase struct {
	name   string
	budget int
	want   []string
	cut    []string
}

// checkSection builds, for each case, input(budget) and checks what its section name keeps and cuts.
func checkSection(t *testing.T, name string, input func(budget int) Input, cases []sectionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := section(t, build(t, input(tc.budget)), name)
			require.Equal(t, tc.want, texts(s.Items))
			require.Equal(t, tc.cut, s.Cut)
		})
	}
}

func TestBuildKeepsInvariantsOverBudget(t *testing.T) {
	t.Parallel()
	invs := []invariant.Invariant{blocking, constraint, safety, correction}
	budgets := general
	budgets.Rules = 5 // less than any one invariant
	b := build(t, Input{Mode: "DEBUGGING", Budgets: budgets, Invariants: invs, Rules: []string{"Answer in English.", "Cite every claim."}})

	rules := section(t, b, Rules)
	require.Equal(t, []string{
		"- [safety_requirement] Never log the access token, not even at debug level.",
		"- [user_correction] it's Python 3.8 on the servers, not 3.11",
		"- [hard_constraint] the image must stay under 500MB",
		"- [blocking_error] `KeyError: 'embedding'`",
	}, texts(rules.Items), "invariants first, in priority order, none cut")
	for _, it := range rules.Items {
		require.True(t, it.Sticky)
		require.Equal(t, KindInvariant, it.Kind)
	}
	require.Greater(t, rules.Used, rules.Budget, "the overflow is reported, not hidden")
	require.Equal(t, []string{fmt.Sprintf("2 rules (%d tokens)", token.Count("- Answer in English.")+token.Count("- Cite every claim."))}, rules.Cut)
	require.Equal(t, []invariant.Invariant{safety, correction, constraint, blocking}, b.Invariants)
	require.Empty(t, Missing(b, invs))
}

func TestBuildOrdersInvariantsByPriorityThenTurn(t *testing.T) {
	t.Parallel()
	older := invariant.Invariant{Type: invariant.Safety, Text: "mask emails in answers", Turn: 1, Priority: 1000}
	// Priority left zero: the type's is used.
	newer := invariant.Invariant{Type: invariant.Safety, Text: "keep all customer data in the EU", Turn: 7}
	b := build(t, Input{Budgets: general, Invariants: []invariant.Invariant{constraint, older, newer}})
	require.Equal(t, []invariant.Invariant{newer, older, constraint}, b.Invariants)
}

func TestBuildRulesFitAfterInvariants(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Prefer short answers. ", 20)
	budgets := Budgets{Rules: token.Count("- [safety_requirement] "+safety.Text) + token.Count("- Answer in English.") + 5}
	b := build(t, Input{Budgets: budgets, Invariants: []invariant.Invariant{safety}, Rules: []string{long, "Answer in English."}})
	rules := section(t, b, Rules)
	require.Equal(t, []string{"- [safety_requirement] " + safety.Text, "- Answer in English."}, texts(rules.Items),
		"a rule that does not fit is dropped whole, and a later one that fits still gets in; no rule is truncated after an invariant")
	require.Equal(t, []string{fmt.Sprintf("1 rule (%d tokens)", token.Count("- "+long))}, rules.Cut)
}

func TestBuildRecentWindow(t *testing.T) {
	t.Parallel()
	var turns []Turn
	for i := 1; i <= 6; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		turns = append(turns, Turn{Turn: i, Role: role, Text: fmt.Sprintf("message number %d about the reindex job", i)})
	}
	line := func(i int) string { return fmt.Sprintf("[turn %d] %s: %s", i, turns[i-1].Role, turns[i-1].Text) }

	checkSection(t, RecentWindow, func(n int) Input { return Input{Budgets: Budgets{RecentWindow: n}, Recent: turns} }, []sectionCase{
		{"all fit", 1000, []string{line(6), line(5), line(4), line(3), line(2), line(1)}, nil},
		{"newest first, cut at the budget", token.Count(line(6)) + token.Count(line(5)) + token.Count(line(4)) + 1,
			[]string{line(6), line(5), line(4)}, []string{"3 older turns"}},
		{"one turn", token.Count(line(6)), []string{line(6)}, []string{"5 older turns"}},
		{"zero", 0, nil, []string{"6 older turns"}},
	})
}

func TestBuildTruncatesOnlyALoneFirstItem(t *testing.T) {
	t.Parallel()
	paste := strings.Repeat("ERROR indexer: chunk 17 rejected by the embedder\n", 200)
	turns := []Turn{{Turn: 1, Role: "user", Text: "hi"}, {Turn: 2, Role: "user", Text: paste}}
	full := token.Count("[turn 2] user: " + paste)
	budgets := Budgets{RecentWindow: 50}
	s := section(t, build(t, Input{Budgets: budgets, Recent: turns}), RecentWindow)
	require.Len(t, s.Items, 1)
	require.True(t, strings.HasPrefix(s.Items[0].Text, "[turn 2] user: ERROR indexer"), "the beginning of the turn is kept")
	require.LessOrEqual(t, s.Used, 50)
	require.Equal(t, []string{fmt.Sprintf("turn 2 truncated to %d of %d tokens", s.Used, full), "1 older turn"}, s.Cut)
}

func TestBuildEvidence(t *testing.T) {
	t.Parallel()
	passageA := "Keys rotate with ragd keys rotate. Old keys stay valid for 24 hours. After that, clients must fetch the new key."
	passageB := strings.Repeat("Rotation is logged in the audit table with the operator and the time. ", 30)
	ev := []Evidence{
		{Marker: "A1", Fact: "Keys rotate with ragd keys rotate.", Title: "Key rotation", Date: "2024-03-01", Passage: passageA, Rank: 1},
		{Marker: "A2", Fact: "Old keys stay valid for 24 hours.", Title: "Key rotation", Date: "2024-03-01", Passage: passageA, Rank: 2},
		{Marker: "B1", Fact: "Rotation is logged in the audit table.", Title: "Audit", Passage: passageB, Rank: 3},
	}
	facts := []string{
		"[A1] Keys rotate with ragd keys rotate. (Key rotation, 2024-03-01)",
		"[A2] Old keys stay valid for 24 hours. (Key rotation, 2024-03-01)",
		"[B1] Rotation is logged in the audit table. (Audit)",
	}
	pa := "[A1, A2] passage (Key rotation, 2024-03-01):\n" + passageA
	pb := "[B1] passage (Audit):\n" + passageB
	factTokens := 0
	for _, f := range facts {
		factTokens += token.Count(f)
	}

	checkSection(t, RetrievedEvidence, func(n int) Input { return Input{Budgets: Budgets{RetrievedEvidence: n}, Evidence: ev} }, []sectionCase{
		{"everything", 100000, append(append([]string{}, facts...), pa, pb), nil},
		{"facts first, then the passages that fit", factTokens + token.Count(pa) + 1,
			append(append([]string{}, facts...), pa), []string{fmt.Sprintf("passage B1 (%d tokens)", token.Count(pb))}},
		{"a smaller later passage still fits", factTokens + token.Count(pa),
			append(append([]string{}, facts...), pa), []string{fmt.Sprintf("passage B1 (%d tokens)", token.Count(pb))}},
		{"facts only", factTokens, facts,
			[]string{fmt.Sprintf("passage A1, A2 (%d tokens)", token.Count(pa)), fmt.Sprintf("passage B1 (%d tokens)", token.Count(pb))}},
		{"zero", 0, nil, []string{
			fmt.Sprintf("3 facts (%d tokens)", factTokens),
			fmt.Sprintf("passage A1, A2 (%d tokens)", token.Count(pa)),
			fmt.Sprintf("passage B1 (%d tokens)", token.Count(pb)),
		}},
	})
}

func TestBuildZeroBudgets(t *testing.T) {
	t.Parallel()
	in := fullInput()
	in.Budgets = Budgets{}
	b := build(t, in)
	for _, s := range b.Sections {
		if s.Name == Rules {
			require.Len(t, s.Items, len(in.Invariants), "sticky invariants survive a zero budget")
			continue
		}
		require.Empty(t, s.Items, s.Name)
		require.NotEmpty(t, s.Cut, "section %s says what it cut", s.Name)
	}
	require.True(t, strings.HasPrefix(b.Text, "## rules\n"))
	require.NotContains(t, b.Text, "## task_state")
	require.Empty(t, Missing(b, in.Invariants))

	// DEBUGGING gives capsules nothing.
	in.Budgets = Budgets{Rules: 5000, TaskState: 4000, RecentWindow: 12000, RetrievedEvidence: 25000, RelevantDecisions: 3000, Capsules: 0}
	b = build(t, in)
	require.Empty(t, section(t, b, Capsules).Items)
	require.Equal(t, []string{"2 older capsules"}, section(t, b, Capsules).Cut)
	require.NotContains(t, b.Text, "## capsules")
}

func TestBuildTaskState(t *testing.T) {
	t.Parallel()
	in := Input{Goal: "ship the reindex fix", Pending: []string{"add a regression test"}, Done: []string{"found the bug", "wrote the patch"}}
	goal, pending := "Goal: ship the reindex fix", "Pending: add a regression test"
	in.Budgets = Budgets{TaskState: token.Count(goal) + token.Count(pending)}
	b := build(t, in)
	s := section(t, b, TaskState)
	require.Equal(t, []string{goal, pending}, texts(s.Items), "done lines are dropped before pending ones")
	require.Equal(t, []string{fmt.Sprintf("2 done lines (%d tokens)", token.Count("Done: found the bug")+token.Count("Done: wrote the patch"))}, s.Cut)
}

func TestMissing(t *testing.T) {
	t.Parallel()
	invs := []invariant.Invariant{safety, correction, constraint, blocking}
	built := build(t, Input{Budgets: general, Invariants: invs})
	require.Empty(t, Missing(built, invs))

	// A bundle made by hand, or changed after Build, that lost two invariants.
	breached := Bundle{Sections: []Section{{Name: Rules, Items: []Item{
		{Kind: KindInvariant, Text: "- [safety_requirement] " + safety.Text, Sticky: true},
		{Kind: KindRule, Text: "- Answer in English."},
	}}, {Name: RecentWindow, Items: []Item{{Kind: KindTurn, Text: "[turn 1] user: " + constraint.Text}}}}}
	require.Equal(t, []invariant.Invariant{correction, constraint}, Missing(breached, invs),
		"only priority >= 800 counts, and only the rules section")

	paraphrased := Bundle{Sections: []Section{{Name: Rules, Items: []Item{{Text: "- never log the access token"}}}}}
	require.Equal(t, []invariant.Invariant{safety}, Missing(paraphrased, []invariant.Invariant{safety}), "verbatim, not paraphrased")
	require.Empty(t, Missing(Bundle{}, []invariant.Invariant{blocking}))
	require.Empty(t, Missing(breached, nil))
}

// fullInput is a bundle input with every section filled, used by the golden test.
func fullInput() Input {
	recent := []Turn{
		{Turn: 1, Role: "user", Text: "The nightly reindex dies with OOMKilled. The image must stay under 500MB."},
		{Turn: 2, Role: "assistant", Text: "Let's go with streaming the chunks instead of loading the whole corpus. That keeps memory flat."},
		{Turn: 3, Role: "user", Text: "Never log the access token, not even at debug level. Now it fails with `KeyError: 'embedding'`."},
		{Turn: 4, Role: "assistant", Text: "The KeyError comes from documents without an embedding. We'll use a skip list for them."},
		{Turn: 5, Role: "user", Text: "actually it's Python 3.8 on the servers, not 3.11"},
	}
	return Input{
		Mode:       "DEBUGGING",
		Budgets:    Budgets{Rules: 5000, TaskState: 4000, RecentWindow: 12000, RetrievedEvidence: 25000, RelevantDecisions: 3000, Capsules: 4000},
		Invariants: []invariant.Invariant{blocking, constraint, safety, correction},
		Rules:      []string{"Answer in English.", "Cite the fact sheet with its markers, like [A1]."},
		Goal:       "The nightly reindex dies with OOMKilled.",
		Pending:    []string{"confirm the fix on staging"},
		Done:       []string{"streaming chunks", "skip list for documents without embeddings"},
		Recent:     recent,
		Evidence: []Evidence{
			{Marker: "A1", Fact: "Reindex streams chunks in batches of 512.", Title: "Operations guide", Date: "2024-05-02",
				Passage: "Reindex streams chunks in batches of 512. Memory stays under 300MB for any corpus size.", Rank: 1},
			{Marker: "B1", Fact: "Python 3.8 lacks the cache decorator used by the embedder.", Title: "Release notes 2.4",
				Passage: "Python 3.8 lacks the cache decorator used by the embedder; use 2.3 on 3.8.", Rank: 2},
		},
		Decisions: Decisions(recent),
		Capsules: []string{
			"Goal: set up ragd on the staging box\nKey points: scripts/setup.sh installs PostgreSQL and pgvector.",
			"Goal: ingest the wiki export\nKey points: JSONL corpora need _id, title and text.",
		},
	}
}

func TestBuildGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		budgets Budgets
	}{
		{"debugging", Budgets{Rules: 5000, TaskState: 4000, RecentWindow: 12000, RetrievedEvidence: 25000, RelevantDecisions: 3000, Capsules: 0}},
		{"general", general},
		// Budgets too small for most things: invariants stay, the rest is cut or truncated.
		{"tight", Budgets{Rules: 10, TaskState: 12, RecentWindow: 40, RetrievedEvidence: 45, RelevantDecisions: 15, Capsules: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := fullInput()
			in.Mode, in.Budgets = strings.ToUpper(tc.name), tc.budgets
			b := build(t, in)
			require.Empty(t, Missing(b, in.Invariants))

			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(b.Text), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "go test ./bundle -run TestBuildGolden -update writes it")
			require.Equal(t, string(want), b.Text)
		})
	}
}

func TestBuildDeterministic(t *testing.T) {
	t.Parallel()
	require.Equal(t, Build(fullInput()), Build(fullInput()))
}
