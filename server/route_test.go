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
