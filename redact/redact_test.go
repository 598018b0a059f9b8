package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/redact"
)

func TestString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://user:hunter22@llm.internal:8080/v1":         "http://REDACTED@llm.internal:8080/v1",
		`Post "https://bob:s3cr3t@api.example.com/v1": EOF`: `Post "https://REDACTED@api.example.com/v1": EOF`,
		"Authorization: Bearer sk-abcdef123456":             "Authorization: REDACTED",
		"header bearer sk-abcdef123456 sent":                "header bearer REDACTED sent",
		`{"error":"invalid api_key: sk-abcdef123456"}`:      `{"error":"invalid api_key: REDACTED"}`,
		"postgres://ragd@/postgres?host=/tmp/sock":          "postgres://REDACTED@/postgres?host=/tmp/sock",
		"nothing secret here":                               "nothing secret here",
	} {
		require.Equal(t, want, redact.String(in), in)
	}
	require.Equal(t, "key REDACTED echoed", redact.String("key zzz-top-secret echoed", "zzz-top-secret"))
	require.Equal(t, "http://REDACTED@host/v1", redact.URL("http://u:p@host/v1"))
	require.Equal(t, []string{"pw12", "sk-key"}, redact.Secrets("", "http://u:pw12@h/", "http://h/", "sk-key"))
}

func TestHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := slog.New(redact.NewHandler(slog.NewTextHandler(&buf, nil), "sk-live-0123456789"))
	l.With("url", "http://a:b@c/").Error("upstream said sk-live-0123456789",
		slog.Any("error", errors.New("dial http://x:y@z/ failed")),
		slog.Group("req", slog.String("auth", "Bearer abcdefgh")))
	out := buf.String()
	for _, secret := range []string{"sk-live-0123456789", "a:b@", "x:y@", "abcdefgh"} {
		require.NotContains(t, out, secret)
	}
	require.Contains(t, out, "REDACTED")
}
