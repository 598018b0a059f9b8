package ask

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/invariant"
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
