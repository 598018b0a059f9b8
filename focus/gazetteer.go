package focus

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Gazetteer finds, in a conversation's text, the names the corpus has as document titles: "the
// Gonville is fine" names GONVILLE HOTEL, "rosas's bed and breakfast" ROSA'S BED AND BREAKFAST,
// "A & B Guesthouse" A AND B GUEST HOUSE. It is built from the corpus (its titles and the
// document frequencies of their words), never from a list written for some data, so it knows
// what any corpus calls its things.
//
// Words are compared as BM25 analyses them (stemmed, without stop words). A text names a title
// when one short stretch of it has the title's words in the title's order, all of them ("The
// Worth House"), or
//
//   - most of the title's distinctive weight: at least MinCoverage of the sum over the title's
//     words of their inverse frequency among titles, so "hotel" or "house", in many titles,
//     weigh little and "Gonville" names GONVILLE HOTEL alone;
//   - a word that is a name: in at most Distinct titles, and found mostly (Nameness) in the
//     chunks of the titles that have it. "worth" is in WORTH HOUSE but also in reviews of
//     every other hotel ("worth the money"), "two" in RESTAURANT TWO TWO and in "two nights";
//     "Gonville" is found almost only in the Gonville's own documents;
//   - and words no other title has all of ("Garden" alone could be CURRY GARDEN or YU GARDEN).
//
// A word of the text also matches a title word one edit away when the text's word is far rarer
// in the corpus (a typo: "Belfrey" for "Belfry", but never "north" for "worth"), and two words
// match one ("guest house" and "guesthouse").
type Gazetteer struct {
	cfg      GazetteerConfig
	analyze  func(string) []string
	names    []name
	byTerm   map[string][]int // title word -> names that have it
	inTitles map[string]int   // title word -> how many names have it
	df       map[string]int   // title word -> chunks that have it, in any field
	nameness map[string]float64
	edits    map[string][]string // a title word with one letter deleted -> the title words
	longest  int                 // bytes of the longest title word typos may match
}

// maxTypoWord is the longest title word, in bytes, that a typo may match. A word's deletions
// cost memory quadratic in its length: a title of one 5 MB word (a document's title or first
// heading) ran ragd serve out of 24 GB while warming its tenant's gazetteer, and it made every
// question's long words as costly. No name is this long.
const maxTypoWord = 64

type name struct {
	text  string
	terms []string
	mass  float64 // sum of the terms' weights
}

// GazetteerConfig holds the linking thresholds.
type GazetteerConfig struct {
	MinCoverage float64
	Nameness    float64
	Distinct    int
}

// DefaultGazetteerConfig returns the thresholds described on Gazetteer: 0.6, 0.9, 2.
func DefaultGazetteerConfig() GazetteerConfig {
	return GazetteerConfig{MinCoverage: 0.6, Nameness: 0.9, Distinct: 2}
}

// TermStats are the corpus's counts for one title word.
type TermStats struct {
	DF      int // chunks with the word in any field
	DFTitle int // chunks with the word in their title
}

// NewGazetteer builds a gazetteer over titles. analyze turns text into words as BM25 sees them;
// stats hold the corpus's counts of the titles' words (a word without counts is no name).
func NewGazetteer(titles []string, analyze func(string) []string, stats map[string]TermStats, cfg GazetteerConfig) *Gazetteer {
	g := &Gazetteer{cfg: cfg, analyze: analyze, byTerm: map[string][]int{}, inTitles: map[string]int{},
		df: map[string]int{}, nameness: map[string]float64{}, edits: map[string][]string{}}
	seen := map[string]bool{}
	for _, t := range titles {
		terms := analyze(t)
		k := strings.Join(terms, " ")
		if len(terms) == 0 || seen[k] {
			continue
		}
		seen[k] = true
		g.names = append(g.names, name{text: strings.TrimSpace(t), terms: terms})
		for _, w := range distinct(terms) {
			g.inTitles[w]++
			if len(w) <= maxTypoWord {
				g.longest = max(g.longest, len(w))
			}
		}
	}
	for i, n := range g.names {
		for _, w := range distinct(n.terms) {
			g.byTerm[w] = append(g.byTerm[w], i)
		}
		for _, w := range n.terms {
			g.names[i].mass += g.weight(w)
		}
	}
	for w := range g.inTitles {
		s := stats[w]
		g.df[w] = s.DF
		if s.DF > 0 {
			g.nameness[w] = float64(min(s.DFTitle, s.DF)) / float64(s.DF)
		}
		if len(w) >= 5 && len(w) <= maxTypoWord {
			for _, d := range deletions(w) {
				g.edits[d] = append(g.edits[d], w)
			}
		}
	}
	return g
}

// Len returns how many names the gazetteer holds.
func (g *Gazetteer) Len() int {
	if g == nil {
		return 0
	}
	return len(g.names)
}

// Words returns the distinct words of titles, for reading their statistics.
func Words(titles []string, analyze func(string) []string) []string {
	var all []string
	for _, t := range titles {
		all = append(all, analyze(t)...)
	}
	return distinct(all)
}

// weight is a title word's inverse frequency among titles.
func (g *Gazetteer) weight(w string) float64 {
	return math.Log(1 + float64(len(g.names))/float64(max(g.inTitles[w], 1)))
}

// isName reports whether a title word can name its titles by itself.
func (g *Gazetteer) isName(w string) bool {
	return g.inTitles[w] > 0 && g.inTitles[w] <= g.cfg.Distinct && g.nameness[w] >= g.cfg.Nameness
}

// Link is a title named in a text.
type Link struct {
	Name string
	// At is the position of the first word of the mention among the text's words.
	At int
	// Coverage is the share of the title's distinctive weight the mention has.
	Coverage float64
}

// Link returns the titles text names, in the order the text names them. df reports how many
// chunks have each word (for telling a typo from another word); nil allows no typos.
func (g *Gazetteer) Link(text string, df func(words []string) map[string]int) []Link {
	if g.Len() == 0 {
		return nil
	}
	words := g.analyze(text)
	if len(words) == 0 {
		return nil
	}
	// The title words each text word may stand for: itself, and title words one edit away
	// when it is rarer (checked below, with df, only for the few candidates there are).
	alias := make([][]string, len(words))
	var unknown []string
	for i, w := range words {
		if g.inTitles[w] > 0 {
			alias[i] = []string{w}
			continue
		}
		if cands := g.typos(w); len(cands) > 0 {
			alias[i] = cands
			unknown = append(unknown, w)
		}
	}
	if len(unknown) > 0 {
		var freq map[string]int
		if df != nil {
			freq = df(unknown)
		}
		for i, w := range words {
			if g.inTitles[w] > 0 || len(alias[i]) == 0 {
				continue
			}
			alias[i] = slices.DeleteFunc(alias[i], func(t string) bool { return freq == nil || freq[w]*typoRarity > g.df[t] })
		}
	}
	// Candidates: titles with a word in few titles (a name, or a word that only a whole title
	// can link) among the text's words, their aliases, or two adjacent text words.
	cands := map[int]bool{}
	addFor := func(w string) {
		if n := g.inTitles[w]; n > 0 && n <= g.cfg.Distinct {
			for _, n := range g.byTerm[w] {
				cands[n] = true
			}
		}
	}
	for i := range words {
		for _, w := range alias[i] {
			addFor(w)
		}
		if i+1 < len(words) {
			addFor(words[i] + words[i+1])
		}
	}
	var out []Link
	for n := range cands {
		if l, ok := g.match(n, words, alias); ok {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b Link) int { return cmp.Or(cmp.Compare(a.At, b.At), strings.Compare(a.Name, b.Name)) })
	return out
}

// match aligns title n with the text, from each word of the text and each word of the title,
// and keeps the best alignment that links: the whole title, or enough of its weight with a name
// word among words no other title has all of.
func (g *Gazetteer) match(n int, words []string, alias [][]string) (Link, bool) {
	tn := g.names[n]
	T := tn.terms
	is := func(j int, w string) bool { return slices.Contains(alias[j], w) }
	best := Link{Name: tn.text, At: -1}
	for start := range words {
		for first := range T {
			var got float64
			var named []string
			take := func(w string) {
				got += g.weight(w)
				named = append(named, w)
			}
			i, j, matched := first, start, 0
			for i < len(T) && j < len(words) && j < start+len(T)+1 {
				switch {
				case is(j, T[i]):
					take(T[i])
					i, j, matched = i+1, j+1, matched+1
				case i+1 < len(T) && words[j] == T[i]+T[i+1]: // "guesthouse" for "guest house"
					take(T[i])
					take(T[i+1])
					i, j, matched = i+2, j+1, matched+1
				case j+1 < len(words) && words[j]+words[j+1] == T[i]: // "guest house" for "guesthouse"
					take(T[i])
					i, j, matched = i+1, j+2, matched+1
				case matched == 0:
					j = len(words) // an alignment starts on a match
				default:
					i++ // the text leaves out a title word ("the Gonville" for GONVILLE HOTEL)
				}
			}
			if matched == 0 || tn.mass == 0 {
				continue
			}
			c := got / tn.mass
			links := c >= 1-1e-9 || (c >= g.cfg.MinCoverage && slices.ContainsFunc(named, g.isName) && g.only(n, named))
			if links && c > best.Coverage {
				best.At, best.Coverage = start, c
			}
		}
	}
	return best, best.At >= 0
}

// only reports whether title n is the only one with all of words.
func (g *Gazetteer) only(n int, words []string) bool {
	for _, m := range g.byTerm[words[0]] {
		if m == n {
			continue
		}
		all := true
		for _, w := range words[1:] {
			all = all && slices.Contains(g.names[m].terms, w)
		}
		if all {
			return false
		}
	}
	return true
}

// typoRarity is how many times rarer than a title word a word of the text must be to pass for a
// typo of it: "Belfrey" is in no document, "thank" is in a few (and is no typo of THANH BINH).
const typoRarity = 10

// typos returns the title words one edit (a deletion, insertion, substitution or swap of
// neighbours) away from w, for words of five letters or more. A word longer than every title
// word but one letter is one edit from none, and is not looked at: its deletions would cost time
// quadratic in its length (an 8 KiB word in a question, BenchmarkLinkLongWord).
func (g *Gazetteer) typos(w string) []string {
	if len(w) < 5 || len(w) > g.longest+1 {
		return nil
	}
	var out []string
	add := func(t string) {
		if t != w && !slices.Contains(out, t) && oneEdit(w, t) {
			out = append(out, t)
		}
	}
	for _, t := range g.edits[w] { // w is a title word with a letter deleted
		add(t)
	}
	for _, d := range deletions(w) {
		if g.inTitles[d] > 0 && len(d) >= 5 { // a title word with a letter inserted
			add(d)
		}
		for _, t := range g.edits[d] { // substitutions and swaps share a deletion
			add(t)
		}
	}
	return out
}

func deletions(w string) []string {
	out := make([]string, 0, len(w))
	for i := range w {
		out = append(out, w[:i]+w[i+1:])
	}
	return out
}

// oneEdit reports whether a and b differ by one deletion, insertion, substitution or swap of
// neighbouring letters.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return a[i:] == b[i+1:]
	case 0:
		var diff []int
		for i := range a {
			if a[i] != b[i] {
				diff = append(diff, i)
			}
		}
		switch len(diff) {
		case 1:
			return true
		case 2:
			i, j := diff[0], diff[1]
			return j == i+1 && a[i] == b[j] && a[j] == b[i]
		}
	}
	return false
}

func distinct(ws []string) []string {
	out := slices.Clone(ws)
	slices.Sort(out)
	return slices.Compact(out)
}
