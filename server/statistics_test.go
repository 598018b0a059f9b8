package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
)

// No cross-tenant statistics side channel over the API: a tenant's conversation (its sources and
// their order, the context it is given, the carry scores and the focus of /sources) is the same
// whether or not another tenant has ingested documents full of its words and titles. BM25's term
// statistics, the keywords a context search adds, the coverage carried sources are re-scored by
// and the gazetteer's document frequencies are all the tenant's own. The same documents ingested
// by the tenant itself do change the conversation, so the comparison can fail.
func TestOtherTenantsDocumentsChangeNothingATenantSees(t *testing.T) {
	t.Parallel()
	b := setup(t, options{keys: true, pipeline: func(c *ask.Config) { c.FreshK = 4 }})
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	bearer := func(tenant any, role ragd.Role) []string {
		id := ragd.DefaultTenant
		if tenant != nil {
			id = tenantB
		}
		return []string{"Authorization", "Bearer " + b.key(t, id, role)}
	}
	adminA, chatA, adminB := bearer(nil, ragd.RoleAdmin), bearer(nil, ragd.RoleChat), bearer(tenantB, ragd.RoleAdmin)
	b.hotels(t, adminA...)

	// conversation runs the same conversation afresh and returns what tenant A is shown, less the
	// ids and timings that differ between any two runs.
	conversation := func() []any {
		t.Helper()
		var shown []any
		ask := func(conv, message string) string {
			t.Helper()
			req := map[string]any{"message": message}
			if conv != "" {
				req["conversation_id"] = conv
			}
			resp, body := b.do(t, "POST", "/v1/ask", req, chatA...)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			var turn map[string]any
			require.NoError(t, json.Unmarshal(body, &turn))
			conv = turn["conversation_id"].(string)
			shown = append(shown, withoutRunIDs(turn))
			return conv
		}
		conv := ask("", "I need a guesthouse in the west with a clean bathroom.")
		resp, body := b.do(t, "POST", "/v1/conversations/"+conv+"/messages",
			map[string]any{"content": "The Hobsons House is a nice guesthouse in the west."}, chatA...)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
		ask(conv, "Are their bathrooms clean? What about the breakfast and parking?")
		ask(conv, "Is the breakfast at the Allenbell better?")
		resp, body = b.do(t, "GET", "/v1/conversations/"+conv+"/sources", nil, chatA...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var sources map[string]any
		require.NoError(t, json.Unmarshal(body, &sources))
		return append(shown, withoutRunIDs(sources))
	}
	before := conversation()

	// Tenant B's documents: A's titles, A's words, many times over.
	words := map[string][]string{}
	for i := range 12 {
		for _, title := range []string{"HOBSONS HOUSE", "ALLENBELL", "WEST GUESTHOUSE"} {
			words[title] = append(words[title], fmt.Sprintf("Review %d: the bathroom was clean, bathrooms clean, breakfast and parking "+
				"at the guesthouse in the west; Hobsons House and the Allenbell compared.", i))
		}
	}
	b.reviews(t, words, adminB...)
	require.Equal(t, before, conversation(), "tenant A is shown exactly the same after tenant B's ingest")

	b.reviews(t, words, adminA...)
	require.NotEqual(t, before, conversation(), "the same documents in tenant A's own corpus change what A is shown")
}

// withoutRunIDs drops from a response what differs between two runs of one conversation: ids,
// times and timings.
func withoutRunIDs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch k {
			case "conversation_id", "message_id", "user_message_id", "id", "timings", "created_at", "updated_at", "last_used_at", "at":
				continue
			}
			out[k] = withoutRunIDs(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutRunIDs(x)
		}
		return out
	}
	return v
}
