package fold

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

// plain is what AppendWords does in one pass, composed of the standard library's functions.
func plain(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

var odd = []string{"", " ", "\t\n", "a", " a b ", "a  b", "ALL CAPS [AT] {ends}.", "\u00a0Kelvin \u212a and \u0130stanbul\u0085next\u2028line\u3000ideographic\u00a0",
	"invalid \xff\xfe utf-8 \xc3 cut", "\x00\x01\x7f DEL and NUL", "ǅ ǈ ǋ titlecase ΣΑΣ", "real \ufffd replacement",
	"\t\n\v\f\r mixed \r\n white\u200bspace \u180e", "@#$%^&*()_+-=`~|\\;:'\",.<>/?"}

func TestAppendWordsIsTheComposition(t *testing.T) {
	t.Parallel()
	texts := append([]string{}, odd...)
	for _, d := range modeltest.Corpus(t, "scifact", 1000) {
		texts = append(texts, d.Title+"\n\n"+d.Text)
	}
	texts = append(texts, modeltest.RandomTexts(1, 2000, 40, "aZ \t\n.,!«»ÉéßİıK\u212a\u00a0\u0085\u2028ΣσςǅÆ中\ufffd\xff")...)
	buf := []byte("kept")
	for _, s := range texts {
		require.Equal(t, plain(s), string(AppendWords(nil, s)), "%q", s)
		buf = AppendWords(buf[:4], s)
		require.Equal(t, "kept"+plain(s), string(buf), "appends after what b holds: %q", s)
	}
}

func FuzzAppendWords(f *testing.F) {
	for _, s := range odd {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := string(AppendWords(nil, s)); got != plain(s) {
			t.Fatalf("AppendWords(%q) = %q, want %q", s, got, plain(s))
		}
	})
}
