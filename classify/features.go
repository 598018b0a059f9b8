package classify

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/wordvec"
)

// Input is one thing to classify: a main text, optional secondary texts, and named numeric
// features computed by the caller.
type Input struct {
	// Text is the main text. It gives word unigrams and bigrams, and character n-grams when
	// the model's options ask for them.
	Text string
	// Context holds secondary texts by name, such as the previous turn under "prev". Each gives
	// word unigrams and bigrams only, hashed under its name so that "error" in the previous turn
	// and "error" in this one are different features.
	Context map[string]string
	// Extra holds named features the caller computes, such as "overlap_history": 0.4. They are
	// used as they are, so callers should keep them roughly within [0, 1] like the text part.
	Extra map[string]float64
	// Contexts, when set, keeps the featurised context blocks for the other inputs that share
	// it: the clauses of one sentence all carry the sentence as context, and featurising it once
	// per clause made a long sentence of many clauses quadratic.
	Contexts *Contexts
}

// Contexts keeps featurised context blocks by text, for inputs that share a context. The zero
// value is ready; it is safe for concurrent use.
type Contexts struct {
	mu     sync.Mutex
	blocks map[contextKey][]feature
}

type contextKey struct {
	name, text string
	hashBits   int
	weight     float64
}

// appendBlock appends the block of context text under name, as featurize would, working it out
// once per text and options when c is not nil.
func (c *Contexts) appendBlock(out []feature, h hasher, name, text string, opts Options) []feature {
	if c == nil {
		return appendBlock(out, wordCounts(h, name, Tokenize(text)), opts.ContextWeight)
	}
	k := contextKey{name, text, opts.HashBits, opts.ContextWeight}
	c.mu.Lock()
	block, ok := c.blocks[k]
	c.mu.Unlock()
	if !ok {
		block = appendBlock(nil, wordCounts(h, name, Tokenize(text)), opts.ContextWeight)
		c.mu.Lock()
		if c.blocks == nil {
			c.blocks = map[contextKey][]feature{}
		}
		c.blocks[k] = block
		c.mu.Unlock()
	}
	return append(out, block...)
}

// feature is one hashed text feature after weighting.
type feature struct {
	bucket uint32
	value  float64
}

// Tokenize lower-cases text and splits it into words and punctuation tokens. A word is a run of
// letters, digits, apostrophes, underscores and inner dots or hyphens ("v1.8", "e-mail",
// "doesn't"); every other visible character is a token of its own, so "?", "`" and "{" survive
// as features: they are some of the best cues there are for questions and code.
func Tokenize(text string) []string {
	var (
		tokens []string
		word   strings.Builder
	)
	flush := func() {
		if word.Len() > 0 {
			tokens = append(tokens, word.String())
			word.Reset()
		}
	}
	runes := []rune(strings.ToLower(text))
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			word.WriteRune(r)
		case (r == '\'' || r == '’' || r == '.' || r == '-') && word.Len() > 0 &&
			i+1 < len(runes) && (unicode.IsLetter(runes[i+1]) || unicode.IsDigit(runes[i+1])):
			// Inner apostrophes, dots and hyphens join the word: "doesn't", "v1.8", "utf-8".
			if r == '’' {
				r = '\''
			}
			word.WriteRune(r)
		case unicode.IsSpace(r):
			flush()
		default:
			flush()
			if unicode.IsPrint(r) {
				tokens = append(tokens, string(r))
			}
		}
	}
	flush()
	return tokens
}

// Words returns the words of text as Tokenize splits them, without the punctuation tokens.
func Words(text string) []string { return words(Tokenize(text)) }

// words returns the tokens that are words, in a new slice.
func words(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	for _, tok := range tokens {
		if isWord(tok) {
			out = append(out, tok)
		}
	}
	return out
}

// isWord reports whether a token is a word rather than punctuation.
func isWord(tok string) bool {
	for _, r := range tok {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// hasher hashes feature strings into 2^bits buckets.
type hasher struct{ mask uint32 }

// bucket hashes the parts (FNV-1a, 32 bits) with a 0 byte between them, so that ("ab","c") and
// ("a","bc") differ.
func (h hasher) bucket(parts ...string) uint32 {
	s := fnvOffset
	for i, p := range parts {
		if i > 0 {
			s = fnvAdd(s, "\x00")
		}
		s = fnvAdd(s, p)
	}
	return s & h.mask
}

// FNV-1a, written out (hash/fnv's, as TestBucket checks) so that a hash can go on from a state:
// charCounts hashes a word's 3-, 4- and 5-grams from one place as one, and no call allocates.
const (
	fnvOffset uint32 = 2166136261
	fnvPrime  uint32 = 16777619
)

// fnvAdd is FNV-1a state s after the bytes of p.
func fnvAdd(s uint32, p string) uint32 {
	for i := 0; i < len(p); i++ {
		s ^= uint32(p[i])
		s *= fnvPrime
	}
	return s
}

// featurize turns the text part of an input into hashed features. Each block (the main text's
// words, its character n-grams, and each context's words) is weighted with sublinear TF
// (1 + ln tf) and L2-normalised on its own, so a long text does not outweigh a short one and
// the many character n-grams do not drown the few words. Context blocks are then scaled by
// opts.ContextWeight. The result is sorted by bucket with duplicates summed. The main text's
// word-vector block (wordVectors) comes from the same tokens.
func featurize(in Input, opts Options) (sparse []feature, dense []float64) {
	h := hasher{mask: uint32(1)<<opts.HashBits - 1}
	var out []feature
	tokens := Tokenize(in.Text)
	out = appendBlock(out, wordCounts(h, "", tokens), 1)
	if opts.CharNGrams {
		out = appendBlock(out, charCounts(h, tokens), 1)
	}
	names := make([]string, 0, len(in.Context))
	for name := range in.Context {
		names = append(names, name)
	}
	sort.Strings(names) // map order is random; float sums are not associative
	for _, name := range names {
		out = in.Contexts.appendBlock(out, h, name, in.Context[name], opts)
	}
	return merge(out), wordVectors(tokens, opts)
}

// wordVectors is the dense block of an input: the mean of the word vectors (package wordvec) of
// the words among the main text's tokens that the table has, L2-normalised and scaled by
// opts.WordVectors, so that a word never seen in training still speaks through the words it is
// like. It is nil when the option is 0 or no word of the text is in the table.
func wordVectors(tokens []string, opts Options) []float64 {
	if opts.WordVectors == 0 {
		return nil
	}
	v := make([]float64, wordvec.Dim)
	if wordvec.Embedded().Mean(words(tokens), v) == 0 {
		return nil
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm == 0 {
		return nil
	}
	scale := opts.WordVectors / math.Sqrt(norm)
	for j := range v {
		v[j] *= scale
	}
	return v
}

// wordCounts counts word unigrams and bigrams, with a start marker so that the first word
// is a feature of its own ("<s> write", "<s> why").
func wordCounts(h hasher, prefix string, tokens []string) map[uint32]float64 {
	counts := make(map[uint32]float64, 2*len(tokens)+1)
	prev := "<s>"
	for _, tok := range tokens {
		counts[h.bucket(prefix, "w", tok)]++
		counts[h.bucket(prefix, "b", prev, tok)]++
		prev = tok
	}
	return counts
}

// charCounts counts character 3- to 5-grams inside words padded with "<" and ">", which
// catches inflections, typos and identifiers that whole words miss ("Exception",
// "ValueError", "recieve").
func charCounts(h hasher, tokens []string) map[uint32]float64 {
	counts := make(map[uint32]float64)
	start := fnvAdd(fnvOffset, "c\x00") // bucket("c", gram) hashes this first
	for _, tok := range tokens {
		if !isWord(tok) {
			continue
		}
		w := "<" + tok + ">"
		// From each rune, the 3-gram, then the 4- and 5-grams whose hashes go on from its.
		// Counts are whole numbers, so the order they are added in changes nothing.
		for i := 0; i < len(w); {
			s, j := start, i
			for n := 1; n <= 5 && j < len(w); n++ {
				_, size := utf8.DecodeRuneInString(w[j:])
				s = fnvAdd(s, w[j:j+size])
				j += size
				if n >= 3 {
					counts[s&h.mask]++
				}
			}
			_, size := utf8.DecodeRuneInString(w[i:])
			i += size
		}
	}
	return counts
}

// appendBlock appends one block of counts with sublinear TF, L2-normalised and scaled.
func appendBlock(out []feature, counts map[uint32]float64, scale float64) []feature {
	if len(counts) == 0 || scale == 0 {
		return out
	}
	start := len(out)
	for b, c := range counts {
		out = append(out, feature{bucket: b, value: 1 + math.Log(c)})
	}
	block := out[start:]
	// Sort before summing and scaling: map order is random and float sums are not associative,
	// so a norm summed in map order differed in its last bits from one call to the next.
	slices.SortFunc(block, byBucket) // a block's buckets are distinct, so any sort gives one order
	var norm float64
	for _, f := range block {
		norm += f.value * f.value
	}
	norm = math.Sqrt(norm)
	for i := range block {
		block[i].value *= scale / norm
	}
	return out
}

// byBucket orders features by bucket, for the generic sorts: sort.Slice's, which swap through
// reflection, took about a quarter of every Predict.
func byBucket(a, b feature) int { return cmp.Compare(a.bucket, b.bucket) }

// merge sorts features by bucket and sums those that share one.
func merge(fs []feature) []feature {
	// Stable, so that features of one bucket are summed in block order, as they always were.
	slices.SortStableFunc(fs, byBucket)
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && out[n-1].bucket == f.bucket {
			out[n-1].value += f.value
			continue
		}
		out = append(out, f)
	}
	return out
}
