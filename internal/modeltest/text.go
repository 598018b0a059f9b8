package modeltest

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ragd/ragd/classify"
)

// Doc is a document of an evaluation corpus (BEIR's corpus.jsonl).
type Doc struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Corpus returns the first n documents (all when n <= 0) of ../shared/data/<name>/corpus.jsonl:
// real text for tests that compare a fast path with a plain one.
func Corpus(t testing.TB, name string, n int) []Doc {
	t.Helper()
	docs, err := classify.LoadJSONL[Doc](filepath.Join(SharedDir(t), "data", name, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 && n < len(docs) {
		docs = docs[:n]
	}
	return docs
}

// RandomTexts returns n strings of up to maxRunes runes drawn from alphabet, the same for the
// same seed: the awkward cases (odd spaces, case folding that changes length, invalid text)
// real corpora rarely hold.
func RandomTexts(seed uint64, n, maxRunes int, alphabet string) []string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	runes := []rune(alphabet)
	out := make([]string, n)
	for i := range out {
		r := make([]rune, rng.IntN(maxRunes))
		for j := range r {
			r[j] = runes[rng.IntN(len(runes))]
		}
		out[i] = string(r)
	}
	return out
}
