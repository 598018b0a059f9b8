// Package refer resolves a turn's references to the sources ragd showed earlier in the
// conversation: "the second one", "the last source", "[B]", "source B", "that article", "the
// Hobsons House one", "both of them", "the first two", and the negated forms ("not the first
// one", "other than B"). It reads the turn against what was shown, deterministically, with no
// model: a reference is a phrase the grammar below recognises, never a guess. A turn that
// names no shown source resolves to nothing, and so do look-alikes such as "the second world
// war", "one more question" or "plan B".
//
// The grammar, by kind of reference:
//
//   - ordinal: "the" or "your" + an ordinal (first..tenth, 1st, 2nd, last, final, penultimate,
//     second to last, top) or a list of them ("the first and third"), followed by a head noun
//     (one, source, document, article, result, link, passage...) or by the end of the clause;
//     a range ("the first two", "the last 3", "the top two results"); "the former", "the
//     latter"; a cue noun and a number ("source 2"). Ordinals count the sources of the last
//     turn that showed any, in the order they were shown.
//   - letter: a document letter in brackets ("[B]"), a citation marker ("[B2]", "[A1, C3]", read
//     with the citations package's marker grammar), or an upper-case letter after a cue noun
//     ("source B", "documents A and C"). Letters name sources of the whole conversation.
//   - title: a cue ("the Hobsons House one", "the one about Hobsons House") and words of one
//     shown title; or, without a cue, a shown title written out in full (two words or more),
//     or a capitalised word in mid-sentence that only one shown title has ("what about
//     Hobsons?").
//   - plural: "both (of them)", "the two (sources)", "those two", "all of them", "each source",
//     "these sources", "the same documents".
//   - deictic: "that article", "this source", "that one", "the same document".
//
// Plural and deictic references pick the sources the previous user turn named by letter or
// title when it named any (a comparison of two sources, then "both of them"), else the first
// sources of the last list.
//
// A reference right after a negation ("not", "except", "other than", "apart from", "instead
// of", "without", "besides", "excluding", "rather than", "don't include") is an exclusion, and
// so is one joined to an exclusion by "and"/"or" ("not the first or the second"). A source both
// referred to and excluded is excluded.
package refer

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd/citations"
)

// Shown is a source ragd returned in an earlier turn of the conversation.
type Shown struct {
	DocID  uuid.UUID
	Letter string // the document's marker letter in the conversation
	Title  string
	Turn   int // the last turn that showed it
	Rank   int // its place among that turn's sources, from 1
}

// Kinds of reference.
const (
	Ordinal = "ordinal" // "the second one", "the first two", "source 2"
	Letter  = "letter"  // "[B]", "[B2]", "source B"
	Title   = "title"   // "the Hobsons House one"
	Plural  = "plural"  // "both of them", "all of them"
	Deictic = "deictic" // "that article"
	// Named is a shown title named without a cue ("is Hobsons House near the river?"): the
	// turn names its subject, which a shown source has as its title; whether that is a
	// reference to the source shown, or to the subject, the turn does not say.
	Named = "named"
)

// Ref is a shown source a turn refers to, and how.
type Ref struct {
	DocID  uuid.UUID `json:"doc_id"`
	Letter string    `json:"letter"`
	Kind   string    `json:"kind"`
	// Phrase is the turn's words that refer to the source, as written.
	Phrase string `json:"phrase"`
}

// Resolution is what a turn refers to among the shown sources.
type Resolution struct {
	// Refers are the sources the turn refers to, in the order it names them, each once.
	Refers []Ref `json:"refers"`
	// Excludes are the sources the turn sets aside ("not the first one"), each once.
	Excludes []Ref `json:"excludes"`
}

// Empty reports whether the turn refers to no shown source at all.
func (r Resolution) Empty() bool { return len(r.Refers) == 0 && len(r.Excludes) == 0 }

// IDs returns the documents of refs, in order.
func IDs(refs []Ref) []uuid.UUID {
	out := make([]uuid.UUID, len(refs))
	for i, r := range refs {
		out[i] = r.DocID
	}
	return out
}

// Resolve reads text, a user turn, against the sources shown earlier in its conversation.
// previous is the user turn before it ("" for none): plural and deictic references lean on
// what it named.
func Resolve(text string, shown []Shown, previous string) Resolution {
	if len(shown) == 0 {
		return Resolution{}
	}
	r := newResolver(shown)
	if previous != "" {
		for _, m := range r.scan(previous, true) {
			if !m.exclude {
				for _, d := range m.docs {
					if !slices.Contains(r.previous, d) {
						r.previous = append(r.previous, d)
					}
				}
			}
		}
	}
	var res Resolution
	matches := r.scan(text, false)
	excluded := map[int]bool{}
	for _, m := range matches {
		if m.exclude {
			for _, d := range m.docs {
				excluded[d] = true
			}
		}
	}
	seen := map[int]bool{}
	for _, m := range matches {
		for _, d := range m.docs {
			if seen[d] || (!m.exclude && excluded[d]) {
				continue
			}
			seen[d] = true
			ref := Ref{DocID: r.shown[d].DocID, Letter: r.shown[d].Letter, Kind: m.kind, Phrase: m.phrase}
			if m.exclude {
				res.Excludes = append(res.Excludes, ref)
			} else {
				res.Refers = append(res.Refers, ref)
			}
		}
	}
	return res
}

// resolver holds the shown sources as the grammar reads them.
type resolver struct {
	shown    []Shown
	last     []int          // the last list: indices of shown, in rank order
	letters  map[string]int // letter -> index of shown
	titles   [][]string     // each shown source's title, as content keys
	distinct map[string]int // title key -> how many distinct titles have it
	previous []int          // what the previous user turn named, in order
	// the current scan
	text string
	toks []token
}

func newResolver(shown []Shown) *resolver {
	r := &resolver{shown: shown, letters: map[string]int{}, distinct: map[string]int{}}
	latest := 0
	for _, s := range shown {
		latest = max(latest, s.Turn)
	}
	seenTitle := map[string]bool{}
	for i, s := range shown {
		if s.Turn == latest {
			r.last = append(r.last, i)
		}
		if s.Letter != "" {
			if j, ok := r.letters[s.Letter]; !ok || newer(s, shown[j]) {
				r.letters[s.Letter] = i
			}
		}
		keys := titleKeys(s.Title)
		r.titles = append(r.titles, keys)
		norm := strings.Join(keys, " ")
		if seenTitle[norm] {
			continue
		}
		seenTitle[norm] = true
		counted := map[string]bool{}
		for _, k := range keys {
			if !counted[k] {
				counted[k] = true
				r.distinct[k]++
			}
		}
	}
	slices.SortStableFunc(r.last, func(a, b int) int { return cmp.Compare(shown[a].Rank, shown[b].Rank) })
	return r
}

// newer reports whether a was shown after b.
func newer(a, b Shown) bool { return a.Turn > b.Turn || (a.Turn == b.Turn && a.Rank < b.Rank) }

// match is one reference found in a text: a span of tokens and the shown sources it names.
type match struct {
	start, end int // tokens [start, end)
	docs       []int
	kind       string
	exclude    bool
	phrase     string
}

// scan finds the references of text, left to right. explicit limits it to letters and titles
// (for the previous turn, whose ordinals counted another list).
func (r *resolver) scan(text string, explicit bool) []match {
	r.text, r.toks = text, tokenize(text)
	var out []match
	for i := 0; i < len(r.toks); {
		m, ok := r.at(i, explicit)
		if !ok || len(m.docs) == 0 {
			i++
			continue
		}
		m.start = i
		m.phrase = strings.TrimSpace(text[r.toks[i].start:r.toks[m.end-1].end])
		m.exclude = r.negated(i)
		if n := len(out); n > 0 && out[n-1].exclude && r.joined(out[n-1].end, i) {
			m.exclude = true
		}
		out = append(out, m)
		i = m.end
	}
	return out
}

// at tries every kind of reference at token i.
func (r *resolver) at(i int, explicit bool) (match, bool) {
	if m, ok := r.bracket(i); ok {
		return m, true
	}
	if m, ok := r.cued(i); ok {
		return m, true
	}
	if !explicit {
		for _, f := range []func(int) (match, bool){r.ordinal, r.plural, r.deictic} {
			if m, ok := f(i); ok {
				return m, true
			}
		}
	}
	if m, ok := r.cuedTitle(i); ok {
		return m, true
	}
	return r.title(i)
}

// Word lists. Tokens are compared lower-cased, without a possessive "'s".
var (
	// heads are the nouns a reference to a source can end with.
	heads = set("one", "ones", "source", "sources", "document", "documents", "doc", "docs", "article",
		"articles", "result", "results", "link", "links", "passage", "passages", "reference",
		"references", "entry", "entries", "hit", "hits", "page", "pages", "website", "websites", "site", "sites")
	// ordinalHeads are the heads an ordinal takes: not "page" ("the first page" is a page of a
	// document) nor "site".
	ordinalHeads = set("one", "ones", "source", "sources", "document", "documents", "doc", "docs", "article",
		"articles", "result", "results", "link", "links", "passage", "passages", "reference",
		"references", "entry", "entries", "hit", "hits")
	// letterCues are the nouns a document letter follows ("source B").
	letterCues = set("source", "sources", "document", "documents", "doc", "docs", "article", "articles",
		"passage", "passages", "reference", "references", "citation", "citations", "link", "links",
		"result", "results")
	// numberCues are the nouns a rank follows ("source 2"); not "article", which laws number.
	numberCues = set("source", "document", "doc", "result", "link", "hit", "passage")
	ordinals   = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
		"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1, "final": -1, "penultimate": -2}
	counts = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
		"nine": 9, "ten": 10}
	// ends are words that may follow an elliptic reference ("what about the second then?").
	ends = set("too", "instead", "then", "please", "again", "also", "only", "now")
	// verbs are what "both" may be the subject of ("do both mention parking?").
	verbs = set("say", "says", "said", "mention", "mentions", "agree", "cover", "have", "has", "offer", "list",
		"include", "are", "were", "do", "did", "describe", "discuss", "talk", "seem", "look", "state",
		"explain", "give", "show", "support", "work", "allow", "accept", "need", "require", "apply")
	// negators set aside the reference they precede.
	negators = set("not", "except", "excluding", "without", "besides", "exclude", "minus", "ignore",
		"ignoring", "skip", "skipping", "instead", "apart", "aside")
	// notVerbs are verbs that negate their object when negated ("don't include the first").
	notVerbs = set("include", "including", "use", "using", "count", "counting", "consider", "cite", "show", "mention")
	// oneNumber are words after which "that one" counts something ("that one more time").
	oneNumber = set("more", "time", "times", "thing", "things", "day", "week", "year", "way", "moment", "question",
		"point", "last", "single", "little", "bit", "another", "other", "or")
	negations = set("not", "don't", "dont", "never", "doesn't")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// token is a word or a punctuation mark of a text.
type token struct {
	raw        string // as written (a word without its possessive "'s")
	low        string // lower-cased raw
	key        string // how a title word is compared (key)
	punct      bool
	start, end int // byte offsets in the text, possessive included
}

// tokenize splits text into words (letters, digits and inner apostrophes) and the punctuation
// marks the grammar reads; hyphens, slashes and white space only separate.
func tokenize(text string) []token {
	out := make([]token, 0, len(text)/4)
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			j := i + size
			for j < len(text) {
				d, n := utf8.DecodeRuneInString(text[j:])
				if unicode.IsLetter(d) || unicode.IsDigit(d) {
					j += n
					continue
				}
				if d == '\'' || d == '’' { // inner apostrophe: "don't", "Hobson's"
					if e, m := utf8.DecodeRuneInString(text[j+n:]); j+n < len(text) && unicode.IsLetter(e) {
						j += n + m
						continue
					}
				}
				break
			}
			raw := text[i:j]
			for _, s := range []string{"'s", "’s", "'S", "’S"} {
				if w, ok := strings.CutSuffix(raw, s); ok && w != "" {
					raw = w
				}
			}
			low := strings.ToLower(raw)
			out = append(out, token{raw: raw, low: low, key: key(low), start: i, end: j})
			i = j
		case strings.ContainsRune("[](),.?!;:&#", c):
			out = append(out, token{raw: string(c), low: string(c), punct: true, start: i, end: i + size})
			i += size
		default:
			i += size
		}
	}
	return out
}

// word reports whether token i is one of words.
func (r *resolver) word(i int, words ...string) bool {
	if i < 0 || i >= len(r.toks) || r.toks[i].punct {
		return false
	}
	return slices.Contains(words, r.toks[i].low)
}

// in reports whether token i is a word of the set.
func (r *resolver) in(i int, words map[string]bool) bool {
	return i >= 0 && i < len(r.toks) && !r.toks[i].punct && words[r.toks[i].low]
}

// clauseEnd reports whether a reference may end before token i: at the end of the text, at a
// punctuation mark that closes a clause, or before a word like "too".
func (r *resolver) clauseEnd(i int) bool {
	if i >= len(r.toks) {
		return true
	}
	t := r.toks[i]
	if t.punct {
		return strings.Contains(".?!,;:)]", t.raw)
	}
	return ends[t.low]
}

// letterAt returns the shown source whose letter token i is: an upper-case run the letter
// grammar accepts (citations.LetterIndex) that names a shown source.
func (r *resolver) letterAt(i int) (int, bool) {
	if i < 0 || i >= len(r.toks) || r.toks[i].punct {
		return 0, false
	}
	l := r.toks[i].raw
	if citations.LetterIndex(l) < 0 {
		return 0, false
	}
	d, ok := r.letters[l]
	return d, ok
}

// bracket reads "[B]", "[B2]", "[A1, C3]" and "[A, C]".
func (r *resolver) bracket(i int) (match, bool) {
	if i >= len(r.toks) || r.toks[i].raw != "[" {
		return match{}, false
	}
	for j := i + 1; j < len(r.toks) && j <= i+16; j++ {
		if r.toks[j].raw != "]" {
			continue
		}
		m := match{end: j + 1, kind: Letter}
		add := func(d int) {
			if !slices.Contains(m.docs, d) {
				m.docs = append(m.docs, d)
			}
		}
		if markers := citations.Markers(r.text[r.toks[i].start:r.toks[j].end]); len(markers) > 0 {
			for _, mk := range markers {
				l, _ := citations.SplitMarker(mk)
				if d, ok := r.letters[l]; ok {
					add(d)
				}
			}
			return m, true
		}
		// Bare letters: "[B]", "[A, C]", "[A and C]".
		for k := i + 1; k < j; k++ {
			if d, ok := r.letterAt(k); ok {
				add(d)
			} else if !r.word(k, "and", "or") && r.toks[k].raw != "," && r.toks[k].raw != "&" {
				return match{}, false
			}
		}
		return m, true
	}
	return match{}, false
}

// cued reads a cue noun and letters or ranks: "source B", "sources A and C", "source 2". A
// negation is a cue for letters too: "other than B", "except A or C" ("plan B" has no cue).
func (r *resolver) cued(i int) (match, bool) {
	letters, numbers := r.in(i, letterCues), r.in(i, numberCues)
	j := i + 1
	if _, ok := r.letterAt(i); ok && r.negated(i) {
		letters, j = true, i
	}
	if !letters && !numbers {
		return match{}, false
	}
	m := match{kind: Letter}
	for {
		if d, ok := r.letterAt(j); ok && letters {
			m.docs = append(m.docs, d)
		} else if n, ok := r.number(j); ok && numbers && n >= 1 && n <= len(r.last) {
			m.kind = Ordinal
			m.docs = append(m.docs, r.last[n-1])
		} else {
			break
		}
		m.end = j + 1
		// A list: "A, B and D", "A or C", "A & B".
		k := j + 1
		for k < len(r.toks) && (r.word(k, "and", "or") || r.toks[k].raw == "," || r.toks[k].raw == "&") {
			k++
		}
		if k == j+1 {
			break
		}
		j = k
	}
	return m, len(m.docs) > 0
}

// number reads a number ("2", "#2", "number 2").
func (r *resolver) number(i int) (int, bool) {
	if i < len(r.toks) && r.toks[i].raw == "#" {
		i++
	}
	if i >= len(r.toks) || r.toks[i].punct {
		return 0, false
	}
	n, err := strconv.Atoi(r.toks[i].raw)
	return n, err == nil
}

// ordinalAt reads one ordinal at token i: its value (1 the first, -1 the last, -2 the one
// before) and the token after it.
func (r *resolver) ordinalAt(i int) (int, int, bool) {
	if i >= len(r.toks) || r.toks[i].punct {
		return 0, 0, false
	}
	w := r.toks[i].low
	n, ok := ordinals[w]
	if !ok {
		n, ok = digitOrdinal(w)
	}
	if !ok {
		if w == "next" && r.word(i+1, "to") && r.word(i+2, "last") {
			return -2, i + 3, true
		}
		return 0, 0, false
	}
	// "second to last", "third from last", "second-last"
	if n > 0 && r.word(i+1, "to", "from") && r.word(i+2, "last") {
		return -n, i + 3, true
	}
	if n > 0 && r.word(i+1, "last") {
		return -n, i + 2, true
	}
	return n, i + 1, true
}

// digitOrdinal reads "2nd", "3rd", "10th".
func digitOrdinal(w string) (int, bool) {
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		if d, ok := strings.CutSuffix(w, suffix); ok {
			if n, err := strconv.Atoi(d); err == nil && n > 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// countAt reads a count ("two", "3").
func (r *resolver) countAt(i int) (int, bool) {
	if i >= len(r.toks) || r.toks[i].punct {
		return 0, false
	}
	if n, ok := counts[r.toks[i].low]; ok {
		return n, true
	}
	n, err := strconv.Atoi(r.toks[i].raw)
	return n, err == nil && n >= 2
}

// ofThem reads "of them", "of these", "of those", "of the sources"; it returns the token after.
func (r *resolver) ofThem(i int) (int, bool) {
	if !r.word(i, "of") {
		return 0, false
	}
	if r.word(i+1, "them", "these", "those", "the") && r.in(i+2, heads) {
		return i + 3, true
	}
	if r.word(i+1, "them", "these", "those") {
		return i + 2, true
	}
	return 0, false
}

// tail reads what ends an ordinal or a plural reference at token i: a head noun, "of them",
// or the end of the clause. It returns the end of the match.
func (r *resolver) tail(i int, heads map[string]bool) (int, bool) {
	switch {
	case r.in(i, heads):
		if _, ok := r.letterAt(i + 1); ok {
			return 0, false // "the two sources A and B": the letters say which
		}
		return i + 1, true
	case r.clauseEnd(i):
		return i, true
	}
	return r.ofThem(i)
}

// ordinal reads "the second one", "the last source", "the first and third", "the first two",
// "the former".
func (r *resolver) ordinal(i int) (match, bool) {
	if !r.word(i, "the", "your") {
		return match{}, false
	}
	j := i + 1
	m := match{kind: Ordinal}
	// "the former", "the latter"
	if r.word(j, "former", "latter") {
		end, ok := r.tail(j+1, ordinalHeads)
		pair := r.pair()
		if !ok || len(pair) < 2 {
			return match{}, false
		}
		m.end, m.docs = end, pair[:1]
		if r.word(j, "latter") {
			m.docs = pair[1:2]
		}
		return m, true
	}
	// Ranges: "the first two", "the last 3 results", "the top two".
	if r.word(j, "first", "last", "top") {
		if n, ok := r.countAt(j + 1); ok {
			end, ok := r.tail(j+2, ordinalHeads)
			if !ok {
				return match{}, false
			}
			n = min(n, len(r.last))
			m.end = end
			if r.word(j, "last") {
				m.docs = slices.Clone(r.last[len(r.last)-n:])
			} else {
				m.docs = slices.Clone(r.last[:n])
			}
			return m, true
		}
	}
	// "the top one", "the top result": top needs its head.
	if r.word(j, "top") {
		if !r.in(j+1, ordinalHeads) {
			return match{}, false
		}
		m.end, m.docs = j+2, r.last[:1]
		return m, true
	}
	var ords []int
	k := j
	for {
		n, next, ok := r.ordinalAt(k)
		if !ok {
			break
		}
		ords, k = append(ords, n), next
		// A list: "the first and (the) third", "the second, third".
		c := k
		if c < len(r.toks) && (r.word(c, "and", "or") || r.toks[c].raw == "," || r.toks[c].raw == "&") {
			c++
			if r.word(c, "the") {
				c++
			}
			if _, _, ok := r.ordinalAt(c); ok {
				k = c
				continue
			}
		}
		break
	}
	if len(ords) == 0 {
		return match{}, false
	}
	end, ok := r.tail(k, ordinalHeads)
	if !ok {
		return match{}, false
	}
	m.end = end
	for _, n := range ords {
		idx := n - 1
		if n < 0 {
			idx = len(r.last) + n
		}
		if idx >= 0 && idx < len(r.last) && !slices.Contains(m.docs, r.last[idx]) {
			m.docs = append(m.docs, r.last[idx])
		}
	}
	return m, true
}

// pair is what "both" and "the two" refer to: the two sources the previous turn named, else
// the first two of the last list.
func (r *resolver) pair() []int {
	if len(r.previous) == 2 {
		return r.previous
	}
	return r.last[:min(2, len(r.last))]
}

// group is what "all of them" and "these sources" refer to: what the previous turn named when
// it named two or more, else the last list.
func (r *resolver) group() []int {
	if len(r.previous) >= 2 {
		return r.previous
	}
	return r.last
}

// one is what "that article" refers to: what the previous turn named when it named one source,
// nothing when it named several (which one is not said), else the first of the last list.
func (r *resolver) one() []int {
	switch {
	case len(r.previous) == 1:
		return r.previous
	case len(r.previous) > 1:
		return nil
	}
	return r.last[:min(1, len(r.last))]
}

// plural reads "both (of them)", "the two (sources)", "those two", "all of them", "all three",
// "each source", "these sources", "the same documents".
func (r *resolver) plural(i int) (match, bool) {
	m := match{kind: Plural}
	switch {
	case r.word(i, "both"):
		end, ok := r.tail(i+1, ordinalHeads)
		if !ok && r.in(i+1, verbs) {
			end, ok = i+1, true
		}
		if !ok {
			return match{}, false
		}
		m.end, m.docs = end, r.pair()
		return m, true
	case r.word(i, "the", "these", "those") && r.word(i+1, "two"):
		end, ok := r.tail(i+2, ordinalHeads)
		if !ok {
			return match{}, false
		}
		m.end, m.docs = end, r.pair()
		return m, true
	case r.word(i, "all"):
		j := i + 1
		if n, ok := r.countAt(j); ok {
			end, ok := r.tail(j+1, ordinalHeads)
			if !ok {
				return match{}, false
			}
			m.end, m.docs = end, r.last[:min(n, len(r.last))]
			return m, true
		}
		if end, ok := r.ofThem(j); ok {
			m.end, m.docs = end, r.group()
			return m, true
		}
		if r.word(j, "the", "these", "those") {
			j++
		}
		if r.in(j, ordinalHeads) && strings.HasSuffix(r.toks[j].low, "s") {
			if _, ok := r.letterAt(j + 1); ok {
				return match{}, false
			}
			m.end, m.docs = j+1, r.group()
			return m, true
		}
	case r.word(i, "each", "every"):
		if end, ok := r.ofThem(i + 1); ok && r.word(i, "each") {
			m.end, m.docs = end, r.group()
			return m, true
		}
		if r.in(i+1, ordinalHeads) && !r.word(i+1, "one") {
			m.end, m.docs = i+2, r.group()
			return m, true
		}
	case r.word(i, "these", "those", "the"):
		j := i + 1
		if r.word(j, "same") {
			j++
		} else if r.word(i, "the") {
			return match{}, false // "the sources" alone says nothing
		}
		if r.in(j, ordinalHeads) && strings.HasSuffix(r.toks[j].low, "s") {
			if _, ok := r.letterAt(j + 1); ok {
				return match{}, false
			}
			m.end, m.docs = j+1, r.group()
			return m, true
		}
	}
	return match{}, false
}

// deictic reads "that article", "this source", "the same document", "that one".
func (r *resolver) deictic(i int) (match, bool) {
	j := i + 1
	switch {
	case r.word(i, "that", "this"):
		if r.word(j, "same") {
			j++
		}
	case r.word(i, "the", "same"):
		if r.word(i, "the") {
			if !r.word(j, "same") {
				return match{}, false
			}
			j++
		}
	default:
		return match{}, false
	}
	// A singular head: "that one", "this article" ("those sources" is plural's).
	if !r.in(j, heads) || r.toks[j].low != "one" && strings.HasSuffix(r.toks[j].low, "s") {
		return match{}, false
	}
	if _, ok := r.letterAt(j + 1); ok {
		return match{}, false // "that source B": the letter says which
	}
	// "that one more time", "this one thing": "one" is a number there.
	if r.word(j, "one") && r.in(j+1, oneNumber) {
		return match{}, false
	}
	docs := r.one()
	if len(docs) == 0 {
		return match{}, false
	}
	return match{end: j + 1, docs: docs, kind: Deictic}, true
}

// titleStop are words a title match skips: they say nothing of which title.
var titleStop = set("a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "by", "with", "from",
	"is", "are", "how", "what", "vs", "about", "as", "into", "your", "my", "our", "its")

// titleKeys returns the content words of a title, as keys.
func titleKeys(title string) []string {
	var out []string
	for _, t := range tokenize(title) {
		if !t.punct && !titleStop[t.low] {
			out = append(out, t.key)
		}
	}
	return out
}

// key is how a title word is compared: lower case, no apostrophes, no plural s, so that
// "Hobson's", "hobsons" and "Hobsons" are one word.
func key(low string) string {
	k := low
	if strings.ContainsAny(k, "'’") {
		k = apostrophes.Replace(k)
	}
	if len(k) > 3 && strings.HasSuffix(k, "s") && !strings.HasSuffix(k, "ss") {
		k = k[:len(k)-1]
	}
	return k
}

var apostrophes = strings.NewReplacer("'", "", "’", "")

// titleRun is a run of a text's words that matches words of a shown title, in order.
type titleRun struct {
	doc      int
	end      int  // the token after the run's last matched word
	words    int  // content words matched
	full     bool // every content word of the title
	distinct bool // a matched word only this title has
	capital  bool // a matched word is capitalised in mid-sentence
}

// runAt matches the words from token i against every shown title: for each title the longest
// run that starts at i, skipping title stop words in the text.
func (r *resolver) runAt(i int) []titleRun {
	if i >= len(r.toks) || r.toks[i].punct || titleStop[r.toks[i].low] {
		return nil
	}
	var out []titleRun
	for d, t := range r.titles {
		best := titleRun{}
		for p, w := range t {
			if w != r.toks[i].key {
				continue
			}
			run := titleRun{doc: d}
			k, q := i, p
			for k < len(r.toks) && !r.toks[k].punct {
				if q < len(t) && r.toks[k].key == t[q] {
					run.words++
					run.distinct = run.distinct || r.distinct[t[q]] == 1
					run.capital = run.capital || r.midCapital(k)
					q++
					k++
					run.end = k
					continue
				}
				if titleStop[r.toks[k].low] && k > i {
					k++
					continue
				}
				break
			}
			run.full = run.words == len(t)
			if run.words > best.words {
				best = run
			}
		}
		if best.words > 0 {
			out = append(out, best)
		}
	}
	return out
}

// midCapital reports whether token i is capitalised and not the first word of a sentence.
func (r *resolver) midCapital(i int) bool {
	c, _ := utf8.DecodeRuneInString(r.toks[i].raw)
	if !unicode.IsUpper(c) || i == 0 {
		return false
	}
	p := r.toks[i-1]
	return !(p.punct && strings.Contains(".?!:", p.raw))
}

// pick chooses the one title among runs that accept says is meant, preferring more words,
// then a full title; a tie between different titles is no reference (which one is not said).
// Sources that share a title are one: the one shown last.
func (r *resolver) pick(runs []titleRun, accept func(titleRun) bool) (titleRun, bool) {
	var best []titleRun
	for _, run := range runs {
		if !accept(run) {
			continue
		}
		if len(best) == 0 || better(run, best[0]) {
			best = []titleRun{run}
		} else if !better(best[0], run) {
			best = append(best, run)
		}
	}
	if len(best) == 0 {
		return titleRun{}, false
	}
	choice := best[0]
	name := strings.Join(r.titles[choice.doc], " ")
	for _, run := range best[1:] {
		if strings.Join(r.titles[run.doc], " ") != name {
			return titleRun{}, false
		}
		if newer(r.shown[run.doc], r.shown[choice.doc]) {
			choice = run
		}
	}
	return choice, true
}

func better(a, b titleRun) bool {
	if a.words != b.words {
		return a.words > b.words
	}
	return a.full && !b.full
}

// cuedTitle reads "the Hobsons House one", "the Acorn article", "the one about Hobsons House".
func (r *resolver) cuedTitle(i int) (match, bool) {
	if !r.word(i, "the", "that", "this") {
		return match{}, false
	}
	// "the one about Hobsons House", "the article on flood insurance"
	if r.in(i+1, heads) && r.word(i+2, "about", "on", "from", "for", "with", "by", "called", "named", "titled") {
		run, ok := r.pick(r.runAt(i+3), func(t titleRun) bool { return t.distinct || t.full })
		if !ok {
			return match{}, false
		}
		return match{end: run.end, docs: []int{run.doc}, kind: Title}, true
	}
	// "the Hobsons House one": the title's words, then the head.
	run, ok := r.pick(r.runAt(i+1), func(t titleRun) bool {
		return (t.distinct || t.full) && r.in(t.end, heads) && !r.word(t.end, "ones") && !strings.HasSuffix(r.toks[t.end].low, "s")
	})
	if !ok {
		return match{}, false
	}
	return match{end: run.end + 1, docs: []int{run.doc}, kind: Title}, true
}

// title reads a shown title named without a cue: in full when it has two words or more
// ("is Hobsons House near the river?"), or by a capitalised word in mid-sentence that only one
// shown title has ("what about Hobsons?").
func (r *resolver) title(i int) (match, bool) {
	run, ok := r.pick(r.runAt(i), func(t titleRun) bool {
		return (t.full && t.words >= 2) || (t.distinct && t.capital)
	})
	if !ok {
		return match{}, false
	}
	return match{end: run.end, docs: []int{run.doc}, kind: Named}, true
}

// negated reports whether the reference at token i is set aside: it follows "not", "except
// (for)", "other than", "apart from", "instead of", "don't include"...
func (r *resolver) negated(i int) bool {
	j := i - 1
	for r.word(j, "the", "for", "of", "from", "about") {
		j--
	}
	if j < 0 || r.toks[j].punct {
		return false
	}
	w := r.toks[j].low
	switch {
	case w == "than":
		return r.word(j-1, "other", "rather")
	case w == "out":
		return r.word(j-1, "leave", "leaving", "leaves")
	case notVerbs[w]:
		return r.in(j-1, negations)
	}
	return negators[w]
}

// joined reports whether only a conjunction separates tokens [from, to): "not the first or the
// second" sets both aside.
func (r *resolver) joined(from, to int) bool {
	if from == to {
		return false
	}
	for k := from; k < to; k++ {
		if !r.word(k, "and", "or", "nor", "the") && r.toks[k].raw != "," && r.toks[k].raw != "&" {
			return false
		}
	}
	return true
}
