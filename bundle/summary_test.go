package bundle

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/token"
)

func TestDecisions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  []string
	}{
		{"cues", []Turn{
			{Role: "user", Text: "Let's go with Postgres for the queue. It is what we run anyway."},
			{Role: "assistant", Text: "Good. We'll use SKIP LOCKED for the workers."},
			{Role: "user", Text: "We decided to keep Redis out of the stack. Final answer: the queue lives in Postgres."},
			{Role: "assistant", Text: "Agreed, and we chose a 30 second visibility timeout."},
		}, []string{
			"Let's go with Postgres for the queue.",
			"We'll use SKIP LOCKED for the workers.",
			"We decided to keep Redis out of the stack.",
			"Final answer: the queue lives in Postgres.",
			"Agreed, and we chose a 30 second visibility timeout.",
		}},
		{"questions and open choices are not decisions", []Turn{
			{Role: "user", Text: "Should we go with Kafka or NATS?"},
			{Role: "assistant", Text: "We haven't decided on the broker yet. If we go with Kafka, we need ZooKeeper or KRaft."},
			{Role: "user", Text: "We never really settled on a naming convention."},
			{Role: "user", Text: "Did you decide?"},
		}, nil},
		{"a restated decision moves to its latest place", []Turn{
			{Role: "user", Text: "Let's go with Postgres."},
			{Role: "assistant", Text: "We'll use SKIP LOCKED."},
			{Role: "user", Text: "OK then. Let's go with  postgres."},
		}, []string{"We'll use SKIP LOCKED.", "Let's go with  postgres."}},
		{"nothing", []Turn{{Role: "user", Text: "hello"}, {Role: "assistant", Text: "Hi! How can I help?"}}, nil},
		{"empty", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Decisions(tc.turns))
		})
	}
}

func TestCapsule(t *testing.T) {
	t.Parallel()
	segment := []Turn{
		{Turn: 1, Role: "user", Text: "How do I rotate the API keys?"},
		{Turn: 2, Role: "assistant", Text: "Sure. Keys rotate with the ragd keys rotate command. " +
			"The weather was nice in 2019. Old API keys stay valid for 24 hours after a rotation."},
		{Turn: 3, Role: "user", Text: "thanks, and where is that logged?"},
		{Turn: 4, Role: "assistant", Text: "Every rotation of a key is written to the audit table."},
	}
	goal := "Goal: How do I rotate the API keys?"
	for _, tc := range []struct {
		name    string
		segment []Turn
		max     int
		want    string
	}{
		{"key points in the order said", segment, 1000, goal + "\nKey points: Keys rotate with the ragd keys rotate command. " +
			"Old API keys stay valid for 24 hours after a rotation. Every rotation of a key is written to the audit table."},
		{"the best key point first when the budget is short, ties to the earlier", segment,
			token.Count(goal + "\nKey points: Keys rotate with the ragd keys rotate command."),
			goal + "\nKey points: Keys rotate with the ragd keys rotate command."},
		{"a lesser point that fits still gets in", segment,
			token.Count(goal + "\nKey points: Keys rotate with the ragd keys rotate command. Every rotation of a key is written to the audit table."),
			goal + "\nKey points: Keys rotate with the ragd keys rotate command. Every rotation of a key is written to the audit table."},
		{"goal only", segment, token.Count(goal + "\nKey points:"), goal},
		{"goal truncated", segment, 4, "Goal: How do"},
		{"zero", segment, 0, ""},
		{"no overlap: the last answer's first sentence", []Turn{
			{Role: "user", Text: "hmm"},
			{Role: "assistant", Text: "Could you say more?"},
			{Role: "assistant", Text: "Restart the indexer. Then run reindex."},
		}, 1000, "Goal: hmm\nKey points: Restart the indexer."},
		{"no user turn", []Turn{{Role: "assistant", Text: "Restart the indexer."}}, 1000, "Key points: Restart the indexer."},
		{"empty", nil, 1000, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Capsule(tc.segment, tc.max)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, token.Count(got), max(tc.max, 0))
		})
	}
}
