package mode

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

func TestMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		hint string
		want Mode
		ok   bool
	}{
		{"task", Task, true},
		{"implement", Task, true},
		{"debug", Debugging, true},
		{"fix", Debugging, true},
		{"error", Debugging, true},
		{"explore", Exploration, true},
		{"investigate", Exploration, true},
		{"learn", Learning, true},
		{"explain", Learning, true},
		{"teach", Learning, true},
		{"  Debug \n", Debugging, true},
		{"TASK", Task, true},
		{"general", "", false},
		{"default", "", false},
		{"", "", false},
		{"unknown", "", false},
		{"tasks", "", false},
	}
	for _, tt := range tests {
		m, ok := Map(tt.hint)
		require.Equal(t, tt.ok, ok, "%q", tt.hint)
		require.Equal(t, tt.want, m, "%q", tt.hint)
	}
}

func TestBudgetsFor(t *testing.T) {
	t.Parallel()
	// DESIGN.md §2: rules, task_state, recent_window, retrieved_evidence, relevant_decisions,
	// capsules.
	tests := []struct {
		mode Mode
		want [6]int
	}{
		{Task, [6]int{10000, 5000, 2000, 28000, 4000, 4000}},
		{Exploration, [6]int{3000, 1000, 15000, 35000, 6000, 2000}},
		{Debugging, [6]int{5000, 4000, 12000, 25000, 3000, 0}},
		{Learning, [6]int{8000, 0, 2000, 40000, 8000, 2000}},
		{General, [6]int{6000, 3000, 8000, 28000, 4000, 4000}},
		{"UNKNOWN", [6]int{6000, 3000, 8000, 28000, 4000, 4000}},
	}
	require.Len(t, tests, len(Modes)+1, "every mode has a row")
	for _, tt := range tests {
		b := BudgetsFor(tt.mode)
		got := [6]int{b.Rules, b.TaskState, b.RecentWindow, b.RetrievedEvidence, b.RelevantDecisions, b.Capsules}
		require.Equal(t, tt.want, got, tt.mode)
		require.Equal(t, tt.want[0]+tt.want[1]+tt.want[2]+tt.want[3]+tt.want[4]+tt.want[5], b.Total())
	}
}

// Matched budgets spend the mode's way at GENERAL's total: the confirmatory analysis.
func TestBudgetsScaledTo(t *testing.T) {
	t.Parallel()
	general := BudgetsFor(General).Total()
	for _, m := range Modes {
		b := BudgetsFor(m).ScaledTo(general)
		require.Equal(t, general, b.Total(), m)
	}
	exp := BudgetsFor(Exploration).ScaledTo(general) // 62000 -> 53000
	require.Equal(t, 15000*53000/62000, exp.RecentWindow, "sections keep their shares")
	require.Equal(t, BudgetsFor(Task), BudgetsFor(Task).ScaledTo(BudgetsFor(Task).Total()))
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, prev string
		want       Mode
	}{
		{"write a bash script that deletes log files older than 30 days", "", Task},
		{"Traceback (most recent call last): KeyError: 'id' when I run the importer, it worked yesterday", "", Debugging},
		{"how does a hash map handle collisions?", "", Learning},
		{"should we use Kafka or just Postgres as a queue for our jobs? thinking about tradeoffs", "", Exploration},
		{"thanks, that's all for today!", "", General},
	}
	for _, tt := range tests {
		m, conf, probs := Classify(tt.text, tt.prev)
		require.Equal(t, tt.want, m, "%q: %v", tt.text, probs)
		require.Equal(t, probs[m], conf)
		var sum float64
		for _, p := range probs {
			sum += p
		}
		require.InDelta(t, 1, sum, 1e-9)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()

	r := Detect(cfg, " Fix ", "thanks!", "", []Mode{Learning, Task, General})
	require.Equal(t, Result{Mode: Debugging, Confidence: 1, Source: SourceMapped}, r, "a mapped hint wins outright")

	r = Detect(cfg, "default", "write a Dockerfile for this flask app, python 3.11", "", nil)
	require.Equal(t, Task, r.Mode)
	require.Equal(t, SourceClassified, r.Source)
	require.Equal(t, Task, r.Classified)
	require.GreaterOrEqual(t, r.Confidence, cfg.Threshold)
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	tests := []struct {
		name   string
		mode   Mode
		conf   float64
		recent []Mode
		want   Result
	}{
		{"confident", Task, 0.9, nil, Result{Mode: Task, Confidence: 0.9, Source: SourceClassified, Classified: Task}},
		{"at the threshold", Task, cfg.Threshold, nil, Result{Mode: Task, Confidence: cfg.Threshold, Source: SourceClassified, Classified: Task}},
		{"unsure", Learning, cfg.Threshold - 0.01, nil, Result{Mode: General, Confidence: cfg.Threshold - 0.01, Source: SourceFallback, Classified: Learning}},
		{"one switch", Task, 0.9, []Mode{Learning, Learning, Learning}, Result{Mode: Task, Confidence: 0.9, Source: SourceClassified, Classified: Task}},
		{"two switches", Task, 0.9, []Mode{Task, Learning, Learning}, Result{Mode: Task, Confidence: 0.9, Source: SourceClassified, Classified: Task}},
		{"three switches", Task, 0.9, []Mode{Debugging, Exploration, Learning}, Result{Mode: General, Confidence: 0.9, Source: SourceFallback, Classified: Task}},
		{"bouncing", Task, 0.9, []Mode{Task, Learning, Task, Learning}, Result{Mode: General, Confidence: 0.9, Source: SourceFallback, Classified: Task}},
		{"old switches leave the window", Task, 0.9, []Mode{Debugging, Exploration, Task, Task, Task}, Result{Mode: Task, Confidence: 0.9, Source: SourceClassified, Classified: Task}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, decide(cfg, tt.mode, tt.conf, tt.recent))
		})
	}
}

func TestSwitches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		recent []Mode
		window int
		next   Mode
		want   int
	}{
		{nil, 3, Task, 0},
		{[]Mode{Task}, 3, Task, 0},
		{[]Mode{Task}, 3, Learning, 1},
		{[]Mode{Task, Learning, Task}, 3, Learning, 3},
		{[]Mode{Task, Learning, Task}, 2, Learning, 2},
		{[]Mode{Task, Learning, Task}, 0, Learning, 0},
		{[]Mode{Task, Task, Learning, Learning}, 3, Task, 2},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Switches(tt.recent, tt.window, tt.next), "%v + %s (window %d)", tt.recent, tt.next, tt.window)
	}
}

func labelsDir(t *testing.T) string {
	return filepath.Join(modeltest.SharedDir(t), "data", "labels")
}

// TestShippedModel fails when the embedded model no longer works: it must fit the rows it was
// trained on, and classify testdata/smoke.jsonl, 30 turns written for this test (6 per mode,
// none a near-copy of a labelled row), about as well as when it was committed. Neither is a
// measure of quality on unseen turns; cross-validation and dev are.
func TestShippedModel(t *testing.T) {
	t.Parallel()
	train, err := LoadExamples(filepath.Join(labelsDir(t), "modes_train.jsonl"))
	require.NoError(t, err)
	extra, err := LoadExamples(filepath.Join("data", "modes_extra.jsonl"))
	require.NoError(t, err)
	fit, _, err := Evaluate(model(), append(train, extra...), DefaultConfig())
	require.NoError(t, err)
	require.GreaterOrEqual(t, fit.Accuracy, 0.98, "accuracy on the training rows (1.00 at commit time)")

	smoke, err := LoadExamples(filepath.Join("testdata", "smoke.jsonl"))
	require.NoError(t, err)
	require.Len(t, smoke, 30)
	raw, _, err := Evaluate(model(), smoke, DefaultConfig())
	require.NoError(t, err)
	require.GreaterOrEqual(t, raw.Accuracy, 0.9, "accuracy on testdata/smoke.jsonl (30 of 30 at commit time)")
}

// TestEmbeddedModelIsReproducible retrains on the shared data and compares with the embedded
// file (byte for byte on amd64, see modeltest.SameModel): the committed model is what `go
// generate` produces.
func TestEmbeddedModelIsReproducible(t *testing.T) {
	t.Parallel()
	rows, err := LoadExamples(filepath.Join(labelsDir(t), "modes_train.jsonl"))
	require.NoError(t, err)
	extra, err := LoadExamples(filepath.Join("data", "modes_extra.jsonl"))
	require.NoError(t, err)
	m, err := Train(append(rows, extra...), TrainOptions())
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	modeltest.SameModel(t, modelJSON, buf.Bytes(), "mode/model.json is stale: run go generate ./mode")
}
