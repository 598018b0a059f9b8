// Package citations builds a turn's fact sheet: for each source the turn returns, the few
// sentences of its passage that best answer the query, each with a citation marker.
//
// A marker is the document's letter and the fact's number, "A1". Markers are stable for a
// conversation: a document keeps the letter it got the first time it was cited, and a sentence
// keeps the marker it got the first time it was cited, so "[A2]" names one sentence of one
// document in every answer of the conversation. A sentence of a document cited for the first
// time gets the document's next number.
//
// Fact selection is extractive and cheap (no models): it runs inside the turn's budget of a few
// tens of milliseconds, so sentences are scored with BM25 against the query, using bleve's
// English analyzer so that "earthquakes" matches "earthquake".
package citations

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/ragd/ragd/fold"
)

// BM25 parameters: the usual defaults, as bleve and Lucene use them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// minWords is the length below which a sentence is a fragment (a heading, a label, "Yes.") that
// is only chosen as a fact when no longer sentence of its source matches.
const minWords = 3

// Source is one source the turn returns, in final order.
type Source struct {
	DocID   uuid.UUID
	ChunkID int64
	Title   string
	// Heading is the passage's heading path ("Install > Linux"). The passage's text repeats its
	// headings as lines of their own; like the title, they are labels, not facts.
	Heading string
	Text    string  // the passage (chunk text) the facts are chosen from
	Score   float64 // the source's final score (rerank or fused)
}

// Fact is one sentence of a source, with its marker.
type Fact struct {
	Marker     string  // "A1"
	Text       string  // one sentence, verbatim from Source.Text
	Score      float64 // the sentence's BM25 score against the query; 0 for a fallback
	Start, End int     // byte offsets of Text in Source.Text
}

// Entry is one source of the sheet and its facts.
type Entry struct {
	Letter string
	Source Source
	// Facts are in the order they appear in the passage, not in score order, and numbered in
	// that order, so that a reader meets A1 before A2 in the text.
	Facts []Fact
}

// SentenceKey identifies a sentence of a document across the turns of a conversation: the same
// words in the same document are the same sentence, wherever a passage wraps them.
type SentenceKey struct {
	DocID uuid.UUID
	Text  string // normalized by KeyOf
}

// KeyOf returns the key of a sentence of doc.
func KeyOf(doc uuid.UUID, sentence string) SentenceKey {
	if spacedOnce(sentence) {
		return SentenceKey{DocID: doc, Text: sentence} // most sentences: no copy
	}
	return SentenceKey{DocID: doc, Text: strings.Join(strings.Fields(sentence), " ")}
}

// spacedOnce reports whether the words of s are separated by single spaces, with no white space
// at either end: whether s is its own key.
func spacedOnce(s string) bool {
	space := true // none may open s
	for _, r := range s {
		isSpace := unicode.IsSpace(r)
		if isSpace && (r != ' ' || space) {
			return false
		}
		space = isSpace
	}
	return !space || s == ""
}

// Build makes the fact sheet of one turn from sources (in final order) and the query.
//
// letters holds the letters documents already have in this conversation; a document without one
// gets Letter(next), Letter(next+1), ... in the order sources are given, skipping letters that
// are already taken so that a stale counter cannot give two documents one letter. Build returns
// the sheet, the letters it assigned (only new ones; nil when none) and the next counter. Sources
// of the same document share its letter and its numbering.
//
// known holds the markers sentences already have in this conversation: a fact that is one of
// them keeps its marker; any other sentence of a document gets the document's next number, after
// every number the document's letter has had (in known or earlier in this sheet). A sentence
// appears at most once in a sheet. Build does not change known; the new markers are the facts'
// markers whose keys known lacks.
//
// Each source gets up to perSource facts: its best sentences by BM25 against the query, where
// the collection is every sentence of every source in this call, ties going to the earlier
// sentence. The title counts for nothing: facts must stand on their own. Fragments of fewer than
// three words score 0 unless no longer sentence of the source matches. When no sentence of a
// source matches the query at all, its first sentences are its facts, since a passage usually
// opens with what it is about. A source gives fewer facts rather than pad them with fragments
// or its title and headings (see pick).
func Build(query string, sources []Source, letters map[uuid.UUID]string, next int, perSource int, known map[SentenceKey]string) (sheet []Entry, assigned map[uuid.UUID]string, nextOut int) {
	taken := make(map[string]bool, len(letters))
	for _, l := range letters {
		taken[l] = true
	}
	letterOf := func(doc uuid.UUID) string {
		if l, ok := letters[doc]; ok {
			return l
		}
		if l, ok := assigned[doc]; ok {
			return l
		}
		for taken[Letter(next)] {
			next++
		}
		l := Letter(next)
		next++
		taken[l] = true
		if assigned == nil {
			assigned = map[uuid.UUID]string{}
		}
		assigned[doc] = l
		return l
	}

	candidates := score(query, sources)
	numbered := map[string]int{} // the highest number of each letter so far
	for _, m := range known {
		letter, n := SplitMarker(m)
		numbered[letter] = max(numbered[letter], n)
	}
	inSheet := map[SentenceKey]bool{}
	sheet = make([]Entry, 0, len(sources))
	for i, src := range sources {
		e := Entry{Letter: letterOf(src.DocID), Source: src}
		fresh := candidates[i][:0:0]
		inSource := map[SentenceKey]bool{} // a sentence the passage repeats is one candidate
		for _, c := range candidates[i] {
			if k := KeyOf(src.DocID, c.Text); !inSheet[k] && !inSource[k] {
				inSource[k] = true
				fresh = append(fresh, c)
			}
		}
		for _, c := range pick(fresh, perSource) {
			key := KeyOf(src.DocID, c.Text)
			inSheet[key] = true
			m, ok := known[key]
			if !ok {
				numbered[e.Letter]++
				m = e.Letter + strconv.Itoa(numbered[e.Letter])
			}
			e.Facts = append(e.Facts, Fact{
				Marker: m,
				Text:   c.Text,
				Score:  c.score,
				Start:  c.Start,
				End:    c.End,
			})
		}
		sheet = append(sheet, e)
	}
	return sheet, assigned, next
}

// SplitMarker splits a marker into its document letter and its number: "AB12" into "AB" and
// 12. A malformed marker has number 0.
func SplitMarker(m string) (string, int) {
	i := strings.IndexFunc(m, func(r rune) bool { return r < 'A' || r > 'Z' })
	if i < 0 {
		return m, 0
	}
	n, _ := strconv.Atoi(m[i:])
	return m[:i], n
}

// candidate is a sentence of a source on its way to being a fact.
type candidate struct {
	Sentence
	tf     []int // occurrences of each query term
	length int   // analyzed terms: what BM25 calls the document length
	long   bool  // minWords or more
	label  bool  // the source's title or one of its headings, as a line of the passage
	score  float64
}

// score splits every source into sentences and scores them with BM25 against query, the
// sentences of all sources together being the collection.
func score(query string, sources []Source) [][]candidate {
	terms := queryTerms(query)
	out := make([][]candidate, len(sources))
	df := make([]int, len(terms))
	n, total := 0, 0
	var buf []byte // each sentence's label form, in turn
	for i, src := range sources {
		out[i] = analyze(src.Text, terms)
		labels := labelsOf(src)
		for j := range out[i] {
			buf = appendLabel(buf[:0], out[i][j].Text)
			if labels[string(buf)] {
				out[i][j].long = false // a label never beats a sentence that says something
				out[i][j].label = true
			}
		}
		for _, c := range out[i] {
			n++
			total += c.length
			for t, f := range c.tf {
				if f > 0 {
					df[t]++
				}
			}
		}
	}
	if n == 0 || len(terms) == 0 {
		return out
	}
	avg := max(float64(total)/float64(n), 1)
	idf := make([]float64, len(terms))
	for t := range terms {
		// Lucene's BM25 IDF: never negative, so a term in most sentences still counts a little.
		idf[t] = math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	for i := range out {
		for j := range out[i] {
			c := &out[i][j]
			norm := bm25K1 * (1 - bm25B + bm25B*float64(c.length)/avg)
			for t, f := range c.tf {
				if f > 0 {
					c.score += idf[t] * float64(f) * (bm25K1 + 1) / (float64(f) + norm)
				}
			}
		}
		demoteFragments(out[i])
	}
	return out
}

// labelsOf returns the normalized title and heading path parts of a source.
func labelsOf(src Source) map[string]bool {
	labels := map[string]bool{}
	for _, l := range append(strings.Split(src.Heading, " > "), src.Title) {
		if l = normalizeLabel(l); l != "" {
			labels[l] = true
		}
	}
	return labels
}

// normalizeLabel is s lower-cased, its words joined by one space, without a final full stop or
// colon: how a sentence is compared with a source's title and headings.
func normalizeLabel(s string) string { return string(appendLabel(nil, s)) }

// appendLabel appends normalizeLabel(s) to b (a turn compares every sentence of its sources).
func appendLabel(b []byte, s string) []byte { return fold.AppendWords(b, strings.TrimRight(s, ".:")) }

// demoteFragments zeroes the scores of a source's fragments when a longer sentence of the source
// matches: a heading that repeats the query would otherwise crowd out the sentence that answers.
func demoteFragments(cs []candidate) {
	if !slices.ContainsFunc(cs, func(c candidate) bool { return c.long && c.score > 0 }) {
		return
	}
	for i := range cs {
		if !cs[i].long {
			cs[i].score = 0
		}
	}
}

// pick returns the perSource best candidates in passage order. A fragment never fills a place
// beside a sentence that says something: it is picked when it matches and no longer sentence
// does, or when the source has no longer sentence. A label (the title or a heading repeated as a
// line) is picked only when the source holds nothing else, matching or not: it names the
// section, which the source shows already. So a short section gives fewer facts rather than
// "[A1] Emergencies" beside its one sentence.
func pick(cs []candidate, perSource int) []candidate {
	if perSource <= 0 || len(cs) == 0 {
		return nil
	}
	hasLong := slices.ContainsFunc(cs, func(c candidate) bool { return c.long })
	hasText := slices.ContainsFunc(cs, func(c candidate) bool { return !c.label })
	order := make([]int, 0, len(cs))
	for i, c := range cs {
		if c.label && hasText || !c.label && !c.long && hasLong && c.score == 0 {
			continue
		}
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(cs[b].score, cs[a].score); c != 0 {
			return c
		}
		// Among equal scores (the fallback's zeros above all) whole sentences come before
		// fragments; the stable sort keeps passage order within each.
		return cmpBool(cs[b].long, cs[a].long)
	})
	order = order[:min(perSource, len(order))]
	slices.Sort(order)
	out := make([]candidate, len(order))
	for i, o := range order {
		out[i] = cs[o]
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// wordCount counts the words of s that hold a letter or digit, so a dash is not a word.
func wordCount(s string) int {
	n := 0
	for f := range strings.FieldsSeq(s) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

// Render writes the sheet as the extractive answer a chat UI shows when no LLM is configured:
// a header "A. Title (date)" for each document, in the order of the sheet, then one line
// "[A1] sentence" per fact of the document's sources, documents separated by a blank line.
// dates is optional (document id to date string); a document without a date gets no
// parentheses. Documents without facts are left out: a header alone answers nothing.
func Render(sheet []Entry, dates map[uuid.UUID]string) string {
	var letters []string
	byLetter := map[string][]Entry{}
	for _, e := range sheet {
		if len(e.Facts) == 0 {
			continue
		}
		if _, seen := byLetter[e.Letter]; !seen {
			letters = append(letters, e.Letter)
		}
		byLetter[e.Letter] = append(byLetter[e.Letter], e)
	}
	var b strings.Builder
	for i, l := range letters {
		entries := byLetter[l]
		if i > 0 {
			b.WriteByte('\n')
		}
		title := strings.TrimSpace(entries[0].Source.Title)
		if title == "" {
			title = "Untitled"
		}
		b.WriteString(l + ". " + title)
		if d := dates[entries[0].Source.DocID]; d != "" {
			b.WriteString(" (" + d + ")")
		}
		b.WriteByte('\n')
		for _, e := range entries {
			for _, f := range e.Facts {
				// A sentence may be wrapped over lines in its passage; one fact is one line here.
				b.WriteString("[" + f.Marker + "] " + strings.Join(strings.Fields(f.Text), " ") + "\n")
			}
		}
	}
	return b.String()
}

// markerGroup matches a bracketed list of markers: "[A1]", "[A1, B2]", "[A1; AB12]". Numbers
// have no leading zero and letters are upper-case, as Build writes them, so "[a2]" or "[A01]"
// in a model's answer is not taken for a citation.
var (
	markerGroup = regexp.MustCompile(`\[\s*[A-Z]+[1-9][0-9]*(?:\s*[,;]\s*[A-Z]+[1-9][0-9]*)*\s*\]`)
	marker      = regexp.MustCompile(`[A-Z]+[1-9][0-9]*`)
)

// Markers returns the distinct citation markers that appear in text ("A1", "AB12"), without
// brackets, in order of first appearance. It reads "[A1]", "[A1][B2]" and "[A1, B2]"; a bracket
// that holds anything else besides markers is not a citation.
func Markers(text string) []string {
	var out []string
	for _, g := range markerGroup.FindAllString(text, -1) {
		for _, m := range marker.FindAllString(g, -1) {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
