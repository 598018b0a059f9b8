package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// A known /v1 path called with another method is a 405 naming the methods it takes, and an
// unknown /v1 path a 404, whatever the key's role: not a 403 for a route that does not exist.
func TestWrongMethodAndUnknownPath(t *testing.T) {
	t.Parallel()
	b := setup(t, options{keys: true})
	for _, role := range []ragd.Role{ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin} {
		secret := b.key(t, ragd.DefaultTenant, role)
		for _, tc := range []struct {
			method, path string
			status       int
			allow        string
		}{
			{"GET", "/v1/ask", http.StatusMethodNotAllowed, "POST"},
			{"DELETE", "/v1/citations", http.StatusMethodNotAllowed, "GET"},
			{"POST", "/v1/conversations/0190f5b4-0000-7000-8000-000000000000/sources", http.StatusMethodNotAllowed, "GET"},
			{"GET", "/v1/nope", http.StatusNotFound, ""},
			{"GET", "/v1", http.StatusNotFound, ""},
			{"POST", "/v1/conversations/0190f5b4-0000-7000-8000-000000000000/nope", http.StatusNotFound, ""},
		} {
			req, err := http.NewRequestWithContext(b.ctx, tc.method, b.srv.URL+tc.path, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+secret)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode, "%s key: %s %s", role, tc.method, tc.path)
			if tc.allow != "" {
				require.Contains(t, resp.Header.Get("Allow"), tc.allow, "%s %s", tc.method, tc.path)
			}
		}
	}
	// The routes themselves still check keys and roles.
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "GET", "/v1/citations", nil, "Authorization", "Bearer "+b.key(t, ragd.DefaultTenant, ragd.RoleChat))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
}

// A query parameter a route does not read, or one given twice, is a 400 naming it: a misspelt
// filter of an audit export would otherwise return every row of the tenant.
func TestUnknownQueryParameterIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.ask(t, "", "smoke alarms")
	b.ask(t, "", "floods")
	for _, tc := range []struct{ path, field string }{
		{"/v1/citations?conversation=" + one.ConversationID, "conversation"},
		{"/v1/citations?conversation_id=" + one.ConversationID + "&conversation_id=" + one.ConversationID, "conversation_id"},
		{"/v1/feedback?conversationid=" + one.ConversationID, "conversationid"},
		{"/v1/conversations?page=2", "page"},
		{"/v1/documents?query=smoke", "query"},
		{"/v1/admin/experiment?since=2026-01-01T00:00:00Z", "since"},
	} {
		resp, body := b.do(t, "GET", tc.path, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", tc.path, body)
		require.Contains(t, decode[problem](t, body).Detail, tc.field+": ", tc.path)
	}
	// The parameters each route reads still work.
	resp, body := b.do(t, "GET", "/v1/citations?conversation_id="+one.ConversationID+"&format=json&limit=5", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	cites := decode[struct {
		Citations []struct {
			ConversationID string `json:"conversation_id"`
		} `json:"citations"`
	}](t, body).Citations
	require.NotEmpty(t, cites)
	for _, c := range cites {
		require.Equal(t, one.ConversationID, c.ConversationID)
	}
	for _, path := range []string{"/v1/conversations?limit=1", "/v1/documents?q=smoke&limit=2", "/v1/feedback?format=jsonl",
		"/v1/admin/experiment?from=2026-01-01T00:00:00Z"} {
		resp, body := b.do(t, "GET", path, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
	}
}

// A route that reads no query parameter refuses one too, and changes nothing: a filter it does
// not have would otherwise be ignored, and DELETE /v1/documents/{id}?version=1 would delete the
// whole document.
func TestQueryParameterOnARouteThatReadsNoneIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	one := b.ask(t, "", "smoke alarms")
	doc := one.Sources[0].DocID
	for _, tc := range []struct{ method, path, field string }{
		{"GET", "/v1/conversations/" + one.ConversationID + "?turn=1", "turn"},
		{"GET", "/v1/messages/" + one.MessageID + "/citations?marker=A1", "marker"},
		{"DELETE", "/v1/documents/" + doc + "?version=1", "version"},
		{"DELETE", "/v1/conversations/" + one.ConversationID + "?soft=1", "soft"},
		{"POST", "/v1/ask?conversation_id=" + one.ConversationID, "conversation_id"},
	} {
		var body any
		if tc.method == "POST" {
			body = map[string]any{"message": "smoke alarms"}
		}
		resp, got := b.do(t, tc.method, tc.path, body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %s: %s", tc.method, tc.path, got)
		require.Contains(t, decode[problem](t, got).Detail, tc.field+": ", tc.path)
	}
	resp, got := b.do(t, "GET", "/v1/documents/"+doc, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the document is still there: %s", got)
	resp, got = b.do(t, "GET", "/v1/conversations/"+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the conversation is still there: %s", got)
	require.Equal(t, 1, b.countWhere(t, "conversations", "true"), "the refused ask made no conversation")
	require.Equal(t, 0, b.countWhere(t, "documents", "deleted_at IS NOT NULL"), "nothing deleted")
}
