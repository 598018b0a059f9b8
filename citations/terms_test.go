package citations

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

// eachTerm runs the English analyzer's filters word by word, remembering each word's term; its
// terms and offsets must be those of the analyzer run on the whole text, on real passages and
// queries, on odd text (possessives, case that changes length, stop words, numbers, ideographs,
// invalid UTF-8), and again once the words are remembered.
func TestEachTermIsTheAnalyzers(t *testing.T) {
	t.Parallel()
	texts := []string{"", " ", "The cat's whiskers", "CATS’ Toys’s ＇S", "İstanbul KELVIN \u212a ΣΑΣ", "the and of",
		"12-month trial, p < 0.05; 3.5%", "中文 かな カナ 한국어", "invalid \xff\xfe utf-8 \xc3", "running runs ran RUNNING",
		"e-mail e.g. U.S.A. don't can't won't", "\u00a0nbsp\u0085nel\u2028line"}
	for _, d := range modeltest.Corpus(t, "scifact", 400) {
		texts = append(texts, d.Title, d.Text)
	}
	texts = append(texts, modeltest.RandomTexts(5, 2000, 40, "aZs' \t\n.:,'’ÉßİK\u212a\u00a0Σǅ中\ufffd0123")...)
	type term struct {
		Term  string
		Start int
	}
	for round := range 2 {
		for _, s := range texts {
			var want, got []term
			for _, tok := range english().Analyze([]byte(s)) {
				want = append(want, term{string(tok.Term), tok.Start})
			}
			eachTerm(s, func(t string, start int) { got = append(got, term{t, start}) })
			require.Equal(t, want, got, "round %d: %q", round, s)
		}
	}
}

// analyze deals the terms out to sentences as it did when it walked the analyzer's tokens for
// each sentence (the oracle below), on real passages and queries.
func TestAnalyzeCountsAsBefore(t *testing.T) {
	t.Parallel()
	oracle := func(text string, terms []string) []candidate {
		sentences := Sentences(text)
		cs := make([]candidate, len(sentences))
		tokens := english().Analyze([]byte(text))
		k := 0
		for i, s := range sentences {
			c := candidate{Sentence: s, tf: make([]int, len(terms)), long: wordCount(s.Text) >= minWords}
			for ; k < len(tokens) && tokens[k].Start < s.End; k++ {
				tok := tokens[k]
				if tok.Start < s.Start {
					continue
				}
				c.length++
				if t := slices.Index(terms, string(tok.Term)); t >= 0 {
					c.tf[t]++
				}
			}
			cs[i] = c
		}
		return cs
	}
	docs := modeltest.Corpus(t, "scifact", 300)
	queries := []string{"vitamin D fracture risk", "cells", "the", "Does smoking cause cancer in mice?", ""}
	for i, d := range docs {
		queries = append(queries, d.Title)
		q := queries[i%len(queries)]
		var want []string
		for _, tok := range english().Analyze([]byte(q)) {
			if !slices.Contains(want, string(tok.Term)) {
				want = append(want, string(tok.Term))
			}
		}
		terms := queryTerms(q)
		require.Equal(t, want, terms, q)
		require.Equal(t, oracle(d.Text, terms), analyze(d.Text, terms), "%q against %q", d.Text, q)
	}
}
