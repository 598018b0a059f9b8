package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
)

// A turn that refers to a source the conversation showed gets that source first, whatever the
// classifier says: here it would call every later turn a new topic, which drops carried sources.
// The cross-encoder (a stand-in with synthetic weights) orders the rest.
func TestReferenceToShownSource(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true, models: true, intent: fixedIntent{Label: ask.NewTopic, Confidence: 0.99}})
	one := b.ask(t, "", "How does earthquake safety compare with flood safety?")
	require.GreaterOrEqual(t, len(one.Sources), 2)
	second := one.Sources[1]

	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": one.ConversationID, "message": "and the second one?"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	two := decode[askResponse](t, body)
	refs := decode[struct {
		References struct {
			Refers []struct {
				Letter string `json:"letter"`
				Kind   string `json:"kind"`
				Phrase string `json:"phrase"`
			} `json:"refers"`
		} `json:"references"`
	}](t, body).References
	require.Len(t, refs.Refers, 1)
	require.Equal(t, second.Letter, refs.Refers[0].Letter)
	require.Equal(t, "ordinal", refs.Refers[0].Kind)
	require.NotEmpty(t, two.Sources)
	require.Equal(t, second.DocID, two.Sources[0].DocID, "the second source of the comparison comes first")
	require.Equal(t, second.Letter, two.Sources[0].Letter)
	require.Equal(t, "the second one", two.Sources[0].Referred)
	require.Equal(t, ask.SameSources, two.Intent.Label)
	require.Contains(t, two.Sources[0].Origins, "carry")
	for _, s := range two.Sources[1:] {
		require.Empty(t, s.Referred)
	}

	// A source set aside by its letter is not among the turn's sources, though its title's
	// words are the question's.
	fire := b.ask(t, one.ConversationID, "What does home fire safety say about smoke alarms?")
	alarms, ok := docOf(fire, "Home Fire Safety")
	require.True(t, ok)
	three := b.ask(t, one.ConversationID, "Home fire safety and smoke alarms, other than ["+alarms.Letter+"]?")
	_, ok = docOf(three, "Home Fire Safety")
	require.False(t, ok, "the excluded source is left out")
}
