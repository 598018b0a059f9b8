package dedupe

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	f, err := os.Open(filepath.Join(modeltest.SharedDir(t), "data", "scifact", "corpus.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(texts) < 2000 {
		var d struct{ Title, Text string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
		texts = append(texts, d.Title+"\n\n"+d.Text)
	}
	require.NoError(t, sc.Err())
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZ \t\n.,!«»ÉéßİıK\u212a\u00a0\u0085\u2028ΣσςǅÆ中\ufffd")
	for range 2000 {
		r := make([]rune, rng.IntN(40))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, string(r))
	}
	for _, s := range texts {
		require.Equal(t, runeByRune(s), normalize(s), "normalize(%q)", s)
	}
}
