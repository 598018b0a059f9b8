package ingest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

func TestCanonicalURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"https://example.com/docs/page", "https://example.com/docs/page"},
		{"HTTPS://Example.COM/Docs/Page", "https://example.com/Docs/Page"}, // path case is meaningful
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com:443/a", "http://example.com:443/a"}, // not http's default port
		{"https://example.com", "https://example.com/"},
		{"https://example.com/a#section-2", "https://example.com/a"},
		{"https://example.com/a?utm_source=x&utm_medium=y&id=7", "https://example.com/a?id=7"},
		{"https://example.com/a?fbclid=abc&gclid=def", "https://example.com/a"},
		{"https://example.com/a?b=2&a=1&b=1", "https://example.com/a?a=1&b=1&b=2"},
		{"https://example.com/a?", "https://example.com/a"},
		{"https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"https://example.com/dir/", "https://example.com/dir/"},
		{"https://user:secret@example.com/a", "https://example.com/a"},
		{"https://example.com./a", "https://example.com/a"},
		{"https://example.com/%7Euser/a%20b", "https://example.com/~user/a%20b"},
		{"https://example.com/search?q=a+b&lang=en", "https://example.com/search?lang=en&q=a+b"},
		{"http://[::1]:80/x", "http://[::1]/x"},
		{"  https://example.com/a  ", "https://example.com/a"},
	} {
		got, err := CanonicalURL(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		again, err := CanonicalURL(got)
		require.NoError(t, err)
		require.Equal(t, got, again, "canonical form is a fixed point: %s", tc.in)
	}
}

func TestCanonicalURLRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"ftp://example.com/a", "file:///etc/passwd", "example.com/a", "https:///a", "http://%zz"} {
		_, err := CanonicalURL(in)
		require.ErrorIs(t, err, ragd.ErrInvalid, in)
	}
}
