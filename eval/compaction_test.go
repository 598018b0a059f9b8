package eval

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/mode"
)

// newTopicWhenAsked stands in for the intent classifier: every later turn is a new topic with
// confidence 0.9, so the goal boundaries are the detector's gate alone.
type newTopicWhenAsked struct{}

func (newTopicWhenAsked) Classify(ask.IntentInput) ask.Intent {
	return ask.Intent{Label: ask.NewTopic, Confidence: 0.9}
}

func TestLoadMultiWOZ(t *testing.T) {
	t.Parallel()
	ds, err := LoadMultiWOZ("../testdata/eval/multiwoz.json")
	require.NoError(t, err)
	require.Len(t, ds, 2)
	d := ds[0]
	require.Equal(t, "MUL0001", d.ID)
	require.Len(t, d.Messages, 14)
	require.Equal(t, "assistant", d.Messages[1].Role)
	var domains []string
	for _, g := range d.Goals {
		domains = append(domains, g.Domain)
	}
	require.Equal(t, []string{"restaurant", "hotel", "taxi"}, domains)
	require.Equal(t, []int{4, 8}, d.Boundaries(), "the user messages where hotel and taxi first get slots")
	require.Equal(t, map[string]string{"area": "north", "name": "acorn guest house", "stay": "3", "people": "2", "day": "friday"},
		d.Goals[1].Values, "parking=yes says nothing a text contains: left out")
	require.Equal(t, 1, d.GoalAt(5))
	require.Empty(t, ds[1].Boundaries())

	_, err = LoadMultiWOZ(filepath.Join(t.TempDir(), "missing.json"))
	require.Error(t, err)
}

func TestReplayCompaction(t *testing.T) {
	t.Parallel()
	ds, err := LoadMultiWOZ("../testdata/eval/multiwoz.json")
	require.NoError(t, err)
	progress := 0
	cfg := CompactionConfig{Intent: newTopicWhenAsked{}, Compact: compact.DefaultConfig(), BudgetMatched: true,
		Budgets: bundle.Budgets(mode.BudgetsFor(mode.General)), Progress: func() { progress++ }}
	rep, err := ReplayCompaction("multiwoz.json", ds, cfg)
	require.NoError(t, err)
	require.Equal(t, 2, progress)
	require.Equal(t, 1, rep.MultiGoal)
	require.Equal(t, 1, rep.SingleGoal)
	require.Equal(t, 10, rep.UserTurns)
	require.Equal(t, 2, rep.Boundary.Gold)
	require.Equal(t, 1.0, rep.Boundary.Recall, "both goal changes ask for something new")

	byName := map[string]StrategyResult{}
	for _, s := range rep.Strategies {
		byName[s.Name] = s
	}
	require.Len(t, byName, 4)
	full, gb := byName[compact.Full], byName[compact.GoalBoundary]
	require.Equal(t, 0.0, full.TokenReductionMulti)
	require.Equal(t, 1.0, full.RetentionMulti, "full context is the reference")
	require.Positive(t, gb.TokenReductionMulti, "capsules replace finished goals")
	require.Equal(t, 1.0, gb.RetentionMulti, "the capsules keep every value")
	require.InDelta(t, 2.0, gb.Capsules, 0, "two finished goals")
	require.InDelta(t, gb.TokenReductionMulti/(1+(1-gb.RetentionMulti)), gb.Efficiency, 1e-9)
	for _, s := range rep.Strategies {
		require.True(t, s.RetentionMultiCI[0] <= s.RetentionMulti && s.RetentionMulti <= s.RetentionMultiCI[1], "%s: %+v", s.Name, s)
		require.True(t, s.TokenReductionMultiCI[0] <= s.TokenReductionMulti && s.TokenReductionMulti <= s.TokenReductionMultiCI[1], "%s: %+v", s.Name, s)
	}
	require.Positive(t, gb.TokenReductionEndMulti)
	require.Less(t, byName[compact.SlidingWindow].RetentionMulti, 1.0, "six messages forget the restaurant")
	require.Positive(t, rep.Matched.WindowTokens)
	require.InDelta(t, gb.TokensPerTurnMultiGoal, rep.Matched.SlidingWindow.TokensPerTurnMultiGoal, 0.05*gb.TokensPerTurnMultiGoal,
		"the matched window spends what goal-boundary spends")
	require.Positive(t, rep.Cost.DialoguesPerSecond)
	require.Contains(t, rep.Hypotheses, "h1")
	require.Contains(t, rep.Hypotheses, "h4")

	// Scripts read the JSON.
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJSON(&buf))
	var parsed struct {
		Boundary struct {
			Precision, Recall, F1 *float64
		} `json:"boundary"`
		Strategies []struct {
			Name                    string   `json:"name"`
			TokenReductionMultiGoal *float64 `json:"token_reduction_multi_goal"`
			RetentionMultiGoal      *float64 `json:"retention_multi_goal"`
			Efficiency              *float64 `json:"efficiency"`
		} `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &parsed))
	require.NotNil(t, parsed.Boundary.F1)
	require.Len(t, parsed.Strategies, 4)
	for _, s := range parsed.Strategies {
		require.NotNil(t, s.TokenReductionMultiGoal, s.Name)
		require.NotNil(t, s.RetentionMultiGoal, s.Name)
		require.NotNil(t, s.Efficiency, s.Name)
	}

	buf.Reset()
	require.NoError(t, rep.WriteTable(&buf))
	require.Contains(t, buf.String(), "goal-boundary")
	require.Contains(t, buf.String(), "(matched)")
	png := filepath.Join(t.TempDir(), "c.png")
	require.NoError(t, rep.WritePlot(png))
}

func TestNormalizeValue(t *testing.T) {
	t.Parallel()
	require.Equal(t, " rosas bed and breakfast ", normalizeValue("Rosa 's Bed and Breakfast"))
	require.Equal(t, " rosas ", normalizeValue("rosa's"))
	require.Equal(t, " leave 18:30 ", normalizeValue("leave=18:30;"))
	require.True(t, strings.Contains(normalizeValue("the Pasta Palace, please"), " pasta palace "))
}
