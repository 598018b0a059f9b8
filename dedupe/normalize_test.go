package dedupe

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

// runeByRune is normalize as it was written first, a rune at a time through unicode: the byte
// path for ASCII must give exactly its output, or passages would group differently.
func runeByRune(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func TestNormalizeIsRuneByRunes(t *testing.T) {
	t.Parallel()
	texts := []string{
		"\u00a0Kelvin \u212a and \u0130stanbul\u0085next\u2028line\u3000ideographic\u00a0",
		"invalid \xff\xfe utf-8 \xc3 cut", "\x00\x01\x7f DEL and NUL", "ALL CAPS [AT] {ends}.", "ǅ ǈ ǋ titlecase ΣΑΣ",
		"\t\n\v\f\r mixed \r\n white\u200bspace \u180e", "@#$%^&*()_+-=`~|\\;:'\",.<>/?",
	}
	for _, d := range modeltest.Corpus(t, "scifact", 2000-len(texts)) {
		texts = append(texts, d.Title+"\n\n"+d.Text)
	}
	texts = append(texts, modeltest.RandomTexts(1, 2000, 40, "aZ \t\n.,!«»ÉéßİıK\u212a\u00a0\u0085\u2028ΣσςǅÆ中\ufffd")...)
	for _, s := range texts {
		require.Equal(t, runeByRune(s), normalize(s), "normalize(%q)", s)
	}
}
