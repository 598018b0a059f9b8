package citations

import (
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/segment"

	"github.com/ragd/ragd/memo"
)

// english is bleve's English analyzer: tokenize, drop possessives, lower-case, drop stop words,
// Porter-stem. It is the one the BM25 index uses, so facts match the query as retrieval did.
var english = sync.OnceValue(func() *analysis.DefaultAnalyzer {
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		panic("citations: bleve's English analyzer is not registered: " + err.Error())
	}
	d, ok := a.(*analysis.DefaultAnalyzer)
	if !ok || len(d.CharFilters) > 0 {
		// eachTerm runs the analyzer's token filters word by word after its tokenizer.
		panic("citations: bleve's English analyzer is not a tokenizer and token filters")
	}
	return d
})

// wordTerm is what the analyzer's token filters make of one word: its term, unless dropped.
type wordTerm struct {
	term string
	kept bool
}

// wordTerms remembers each word's term: a turn analyses every sentence of its sources, and
// stemming a word costs a dozen times more than looking it up.
var wordTerms = memo.New[wordTerm](64 * 1024)

// eachTerm calls fn with every term the English analyzer makes of text, with the byte offset of
// its word, in order: the analyzer's own tokenizer cuts the words (as its unicode tokenizer
// does, from the same segmenter), and each word goes through the analyzer's token filters.
// Those read each token alone (its bytes; possessive, lower case, stop words, stemmer), so a
// word's term depends on nothing around it, and is worked out once.
func eachTerm(text string, fn func(term string, start int)) {
	words := segment.NewWordSegmenterDirect([]byte(text))
	start := 0
	for words.Segment() {
		w := words.Bytes()
		if words.Type() != segment.None {
			if t := wordTerms.GetBytes(w, filterWord); t.kept {
				fn(t.term, start)
			}
		}
		start += len(w)
	}
}

// filterWord runs the analyzer's token filters on one word.
func filterWord(w string) wordTerm {
	ts := analysis.TokenStream{{Term: []byte(w), Start: 0, End: len(w), Position: 1}}
	for _, f := range english().TokenFilters {
		ts = f.Filter(ts)
	}
	if len(ts) == 0 {
		return wordTerm{}
	}
	return wordTerm{term: string(ts[0].Term), kept: true}
}

// queryTerms returns the distinct analyzed terms of query, in order of first appearance.
func queryTerms(query string) []string {
	var terms []string
	eachTerm(query, func(t string, _ int) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	})
	return terms
}

// analyze splits text into sentences and counts, for each, its analyzed terms and the
// occurrences of each query term. The text is analyzed once and the terms dealt out to the
// sentences by offset, which is cheaper than analyzing each sentence.
func analyze(text string, terms []string) []candidate {
	sentences := Sentences(text)
	cs := make([]candidate, len(sentences))
	tf := make([]int, len(sentences)*len(terms)) // one allocation for every sentence's counts
	for i, s := range sentences {
		cs[i] = candidate{Sentence: s, tf: tf[i*len(terms) : (i+1)*len(terms) : (i+1)*len(terms)], long: wordCount(s.Text) >= minWords}
	}
	i := 0
	eachTerm(text, func(term string, start int) {
		for i < len(cs) && start >= cs[i].End {
			i++
		}
		if i == len(cs) || start < cs[i].Start {
			return // after the last sentence, or in a list marker or other text between sentences
		}
		cs[i].length++
		if t := slices.Index(terms, term); t >= 0 {
			cs[i].tf[t]++
		}
	})
	return cs
}
