package token

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		// Reference counts from OpenAI's tiktoken for cl100k_base.
		{"tiktoken is great!", 6},
		{"The quick brown fox jumps over the lazy dog.", 10},
	} {
		require.Equal(t, tc.want, Count(tc.in), tc.in)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	s := "The quick brown fox jumps over the lazy dog."
	require.Equal(t, "The quick brown", Truncate(s, 3))
	require.Equal(t, s, Truncate(s, 100))
	require.Equal(t, "", Truncate(s, 0))
}

// Count sums cached word counts; it must give the encoder's own count on every text of the
// evaluation data (each JSON string of every JSON Lines file in ../shared/data).
func TestCountMatchesTheEncoder(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(modeltest.SharedDir(t), "data", "*", "*.jsonl"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(modeltest.SharedDir(t), "data", "*", "*", "*.jsonl"))
	require.NoError(t, err)
	files = append(files, more...)
	require.NotEmpty(t, files)
	texts, tokens := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for line := range bytes.Lines(b) {
			var v any
			if json.Unmarshal(line, &v) != nil {
				continue
			}
			for _, s := range jsonStrings(v, nil) {
				want := encode(s)
				require.Equal(t, want, Count(s), "%s: %q", f, s)
				texts++
				tokens += want
			}
		}
	}
	t.Logf("%d texts, %d tokens", texts, tokens)
}

func jsonStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	}
	return out
}

// tricky are the pieces the pre-tokenizer treats specially: runs of spaces, line breaks, tabs and
// Unicode spaces before words, contractions (also after a space and in upper case), digit runs
// it cuts by three, punctuation runs, letters outside ASCII, combining marks, emoji and bytes
// that are not UTF-8.
var tricky = []string{
	" ", "  ", "   ", "\n", "\n\n", "\r\n", "\t", " \t ", "\u00a0", "\u3000", "\u2028", "\v", "\f",
	"'s", "'S", "'t", "'re", "'VE", "'m", "'ll", "'d", "'", "\u2019s",
	"a", "the", "The", "word", "x", "1", "12", "1234", "1234567", "3.14", "\u0661\u0662",
	".", ",", "!?", "...", "(", ")", "[b]", "{c}", "--", "\"", "\\", "<", "=", "$", "%", "@", "#", "~", "\u007f",
	"na\u00efve", "caf\u00e9", "\u6771\u4eac", "\u30bf\u30ef\u30fc", "\u0645\u0631\u062d\u0628\u0627", "\u0928\u092e\u0938\u094d\u0924\u0947",
	"e\u0301", "\u0301", "\U0001F600", "\U0001F44D\U0001F3FD", "\u00b2", "\u2167", "\u00bd",
	"\xff", "\xc3", "\xe2\x82", "\x00",
}

// TestCountAdversarial compares Count with the encoder on texts built to sit at the edges of the
// argument: each tricky piece next to every other, and many seeded random strings of them.
func TestCountAdversarial(t *testing.T) {
	t.Parallel()
	check := func(s string) {
		t.Helper()
		require.Equal(t, encode(s), Count(s), "%q", s)
	}
	for _, a := range tricky {
		for _, b := range tricky {
			check(a + b)
			check(a + " " + b)
			check("x" + a + " " + b + " y")
			check(" " + a + "  " + b + "\n")
		}
	}
	r := rand.New(rand.NewPCG(13, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(tricky[r.IntN(len(tricky))])
		}
		check(b.String())
	}
	// A long text without spaces takes the uncached path.
	check(strings.Repeat("abc.", 40) + " " + strings.Repeat("\u6771", 30) + " end")
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"hello world", "it's  two  spaces", "a\n\n b\r\n c", "x. y", "1234 5678 x",
		"na\u00efve caf\u00e9 \u6771\u4eac \u30bf\u30ef\u30fc", "word\u00a0 word", "tab\t word", "end ", " start",
		"(a) [b] {c}", "don't won't I'm we'll", "it 's", "a , b ; c", "emoji \U0001F600 x", "\u3000 wide",
		"\u00e9 e\u0301 x", "\xff \xc3 x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		long := false
		eachWord(s, func(w string) { long = long || len(w) > longestPiece })
		if want := encode(s); !long && Count(s) != want {
			t.Fatalf("Count(%q) = %d, the encoder says %d", s, Count(s), want)
		}
		if n := len(encodeIDs(s)); Count(s) != n {
			t.Fatalf("Count(%q) = %d, Truncate's encoding has %d tokens", s, Count(s), n)
		}
	})
}

// A word longer than longestPiece (no spaces: a pasted hash, a run of letters) is counted and
// truncated in pieces, in time linear in its length: its count stays within a token per cut of
// the encoder's, and Truncate still returns a prefix of it with at most the tokens asked for.
func TestLongWordCountsInPieces(t *testing.T) {
	t.Parallel()
	for _, w := range []string{
		strings.Repeat("a", 8192),
		"what is " + strings.Repeat("qwertyuiopasdfghjklzxcvbnm", 315) + " here?",
		strings.Repeat("1234567", 1000),
		strings.Repeat("\u6771\u4eac", 1000), // 3-byte runes: cuts fall on rune boundaries
		"https://example.com/" + strings.Repeat("abc/def_", 100),
	} {
		cuts := len(w) / longestPiece
		require.InDelta(t, encode(w), Count(w), float64(cuts), "%.40q", w)
		require.Equal(t, Count(w), len(encodeIDs(w)))
		for _, max := range []int{1, 100, Count(w) - 1} {
			p := Truncate(w, max)
			require.True(t, strings.HasPrefix(w, p), "%.40q", p)
			require.LessOrEqual(t, len(encodeIDs(p)), max)
			require.NotEmpty(t, p)
		}
		require.Equal(t, w, Truncate(w, Count(w)))
	}
}
