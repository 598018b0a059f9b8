package citations

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

// normalizeLabel builds its text in one pass; it must equal the plain composition of the
// standard library's functions it replaced, on real sentences and titles and on odd text.
func TestNormalizeLabelIsTheComposition(t *testing.T) {
	t.Parallel()
	plain := func(s string) string {
		return strings.ToLower(strings.Join(strings.Fields(strings.TrimRight(s, ".:")), " "))
	}
	texts := []string{"", "...", " : ", "Title.", "A Title:  with\tTabs.:", "\u00a0NBSP\u00a0Kelvin \u212a İstanbul ΣΑΣ.",
		"invalid \xff\xfe utf-8 \xc3", "real \ufffd replacement", "ǅ titlecase\u2028line\u0085nel"}
	for _, d := range modeltest.Corpus(t, "scifact", 500) {
		texts = append(texts, d.Title)
		for _, s := range Sentences(d.Text) {
			texts = append(texts, s.Text)
		}
	}
	texts = append(texts, modeltest.RandomTexts(3, 2000, 30, "aZ \t\n.:,ÉßİK\u212a\u00a0\u0085Σǅ中\ufffd")...)
	var buf []byte
	for _, s := range texts {
		require.Equal(t, plain(s), normalizeLabel(s), "%q", s)
		buf = appendLabel(buf[:0], s)
		require.Equal(t, plain(s), string(buf), "%q", s)
	}
}

// KeyOf returns a sentence that is its own key without copying it; the key must still be the
// sentence's words joined by single spaces.
func TestKeyOfIsTheWordsJoined(t *testing.T) {
	t.Parallel()
	doc := uuid.New()
	for _, s := range []string{"", " ", "a", "a b", " a b", "a b ", "a  b", "a\tb", "a\u00a0b", "a\u0085b", "a\u2028b",
		"a\xffb c", "\xff", "one two three.", "x \u3000y", "a \n"} {
		require.Equal(t, strings.Join(strings.Fields(s), " "), KeyOf(doc, s).Text, "%q", s)
	}
	f, err := os.Open(filepath.Join(modeltest.SharedDir(t), "data", "scifact", "corpus.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for docs := 0; sc.Scan() && docs < 300; docs++ {
		var d struct{ Text string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
		for _, s := range Sentences(d.Text) {
			require.Equal(t, strings.Join(strings.Fields(s.Text), " "), KeyOf(doc, s.Text).Text, "%q", s.Text)
		}
	}
}
