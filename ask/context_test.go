package ask

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
)

// The turn hands the context stage its message's spans as detected, an empty list when there
// are none (persist): the bundle's input must be what it is when the stage detects them itself.
func TestContextInputWithTheTurnsSpans(t *testing.T) {
	earlier := []ragd.Message{
		{ID: uuid.New(), Turn: 1, Role: "user", Content: "Never send customer data to an external API."},
		{ID: uuid.New(), Turn: 1, Role: "assistant", Answer: "Understood."},
	}
	strategy, err := compact.New(compact.DefaultConfig())
	require.NoError(t, err)
	for _, msg := range []string{
		"what is the capital of France?",
		"Which of these studies used mice?",
		"I get KeyError: 'embedding' when I run the indexer",
		"Actually it has to run on our own servers, not in the cloud.",
	} {
		for _, h := range []History{{}, {Messages: earlier}, {Sticky: invariant.Sticky([]invariant.Message{{ID: "1", Turn: 1, Text: earlier[0].Content}}), StickyKept: true}} {
			spans := invariant.Detect(msg)
			if spans == nil {
				spans = []invariant.Span{}
			}
			given := ContextInput(h, TurnContext{Number: 2, Message: msg, Spans: spans, Strategy: strategy})
			detected := ContextInput(h, TurnContext{Number: 2, Message: msg, Strategy: strategy})
			require.Equal(t, detected, given, msg)
		}
	}
}

// A new conversation, as the turn read it (nothing) and as its transaction created it (with the
// arm the turn drew), has not moved: its context is gathered once. One another turn wrote to
// meanwhile has.
func TestNewConversationHasNotMoved(t *testing.T) {
	ref := ragd.ConversationRef{ID: uuid.New(), New: true, Arm: "treatment"}
	created := &ragd.ConversationState{Conversation: ragd.Conversation{ID: ref.ID, ABArm: "treatment"}}
	read := &ragd.ConversationState{}
	require.False(t, moved(asRead(read, ref), created))
	require.Equal(t, "", read.Conversation.ABArm, "the state as read is left as it was")

	old := ragd.ConversationRef{ID: ref.ID}
	before := &ragd.ConversationState{Conversation: ragd.Conversation{ID: ref.ID, ABArm: "control", Turn: 3}}
	require.Same(t, before, asRead(before, old))
	after := &ragd.ConversationState{Conversation: ragd.Conversation{ID: ref.ID, ABArm: "control", Turn: 4}}
	require.True(t, moved(asRead(before, old), after))
}

// A turn without a previous turn hands the invariant detector the P(DEBUGGING) of its own mode
// classification, which must be the one the detector would compute; a turn after another, or
// one whose hint named the mode, leaves the detector to classify the message itself. Either
// way the spans are the detector's own.
func TestMessageSpansReuseTheTurnsModeOnlyWithoutPreviousTurn(t *testing.T) {
	type row struct {
		Text string `json:"text"`
	}
	var msgs []string
	for _, f := range []string{"invariants_check.jsonl", "invariants_real.jsonl"} {
		rows, err := classify.LoadJSONL[row](filepath.Join("..", "invariant", "data", f))
		require.NoError(t, err)
		for _, r := range rows {
			msgs = append(msgs, strings.TrimSpace(r.Text))
		}
	}
	require.Greater(t, len(msgs), 100)
	cfg := mode.DefaultConfig()
	given := 0
	for _, msg := range msgs {
		first := Mode{Result: mode.Detect(cfg, "", msg, "", nil)}
		p, ok := debuggingOf(first, "")
		require.True(t, ok, msg)
		require.Equal(t, invariant.Debugging(msg), p, msg)
		require.Equal(t, invariant.Detect(msg), messageSpans(msg, first, ""), msg)

		prev := "The build failed again with exit code 137."
		later := Mode{Result: mode.Detect(cfg, "", msg, prev, nil)}
		_, ok = debuggingOf(later, prev)
		require.False(t, ok, "classified after a previous turn: %s", msg)
		require.Equal(t, invariant.Detect(msg), messageSpans(msg, later, prev), msg)

		mapped := Mode{Result: mode.Detect(cfg, "learn", msg, "", nil)}
		_, ok = debuggingOf(mapped, "")
		require.False(t, ok, "a mapped hint runs no classifier: %s", msg)
		if len(invariant.Detect(msg)) > 0 {
			given++
		}
	}
	require.Greater(t, given, 20, "the messages hold invariants")
}
