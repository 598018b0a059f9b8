package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/internal/modeltest"
)

// eval classifiers prints, for every class of every classifier, a row that starts with the
// class name, then its precision, then its recall, numbers in 0..1: what scripts read.
func TestEvalClassifiers(t *testing.T) {
	labels := filepath.Join(modeltest.SharedDir(t), "data", "labels")
	var out strings.Builder
	cfg := ask.DefaultConfig()
	require.NoError(t, evalClassifiers(&out, evalClassifiersCmd{
		Modes:      filepath.Join(labels, "modes_train.jsonl"), // never dev: a test run is not the dev check
		Intents:    filepath.Join(labels, "intent_train.jsonl"),
		Invariants: filepath.Join(labels, "invariants_train.jsonl"),
	}, cfg.Mode, cfg.IntentThreshold))
	text := out.String()
	for _, class := range []string{"TASK", "EXPLORATION", "DEBUGGING", "LEARNING", "GENERAL", "new-topic", "drill-down",
		"compare", "same-sources", "safety_requirement", "user_correction", "hard_constraint", "blocking_error", `sticky \(any type\)`} {
		rows := regexp.MustCompile(`(?m)^\s*`+class+`\s+(\S+)\s+(\S+)\s`).FindAllStringSubmatch(text, -1)
		require.NotEmpty(t, rows, class)
		for _, row := range rows {
			for _, v := range row[1:] {
				x, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err, "%s: %q", class, row[0])
				require.True(t, x >= 0 && x <= 1, "%s: %q", class, row[0])
			}
		}
	}
	require.Contains(t, text, "with the fallback (confidence < 0.40 counts as GENERAL)")
	require.Regexp(t, `together\s+p50`, text)
	require.Regexp(t, `(?m)^as served\s+[01]\.\d{3} \[[01]\.\d{3}, [01]\.\d{3}\] \(\d+/200\)\s+[01]\.\d{3} \[`, text, "accuracy and false new-topic rate of the intent model as served")
}
