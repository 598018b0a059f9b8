package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Open mode (a loopback server no key was ever made for) ends for good with the first key:
// revoking every key afterwards must not hand the API, as the default tenant's admin, to anyone
// who can reach it (a reverse proxy on the same host included).
func TestRevokingEveryKeyDoesNotReopenTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, options{}) // open while no key exists
	resp, body := b.do(t, "GET", "/v1/keys", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "open before the first key: %s", body)

	resp, body = b.do(t, "POST", "/v1/keys", map[string]any{"role": "admin", "name": "ops"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	k := decode[struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}](t, body)
	resp, body = b.do(t, "GET", "/v1/documents", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "closed once a key is made: %s", body)

	resp, body = b.do(t, "DELETE", "/v1/keys/"+k.ID, nil, "Authorization", "Bearer "+k.Secret)
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/keys", nil},
		{"GET", "/v1/documents", nil},
		{"POST", "/v1/keys", map[string]any{"role": "admin", "name": "intruder"}},
	} {
		resp, body = b.do(t, tc.method, tc.path, tc.body)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "every key revoked, %s %s: %s", tc.method, tc.path, body)
	}
	require.Equal(t, 1, b.count(t, "api_keys"), "no key was made without one")
}
