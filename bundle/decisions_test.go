package bundle

import (
	"testing"

	"github.com/stretchr/testify/require"
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
