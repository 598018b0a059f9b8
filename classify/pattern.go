package classify

import (
	"cmp"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/coregx/ahocorasick"
)

// Pattern is a regular expression for a cue feature, matched in parts that are cheap to rule
// out. A cue is mostly a long list of alternatives, and the regexp engine costs about 20 µs on a
// chat sentence and milliseconds on 8 KiB for one, whatever the text holds. So a Pattern is cut
// into branches, its alternatives with what comes before and after them ("\b(?:a|b)\b" is
// "\ba\b" or "\bb\b"), and each branch knows sets of strings such that every match of it holds
// a string of each set (worked out from the pattern's syntax): one pass over a text finds the
// branches it may match, and only those run, each a small expression. MatchString's answer is
// always the regexp's own.
type Pattern struct {
	*regexp.Regexp
	// parts are the branches and what finds them, worked out on first use.
	parts func() parts
}

// parts are a Pattern's branches and the needles that find those a text may match.
type parts struct {
	branches []branch
	sets     [][]string      // the needed sets of all branches
	need     func() *needles // finds sets; built on first use, not for a pattern used in a set
}

// branch is one branch of a Pattern, compiled on first use: most never run.
type branch struct {
	re func() *regexp.Regexp
	// sets are the needles' sets a text must hold a string of each of to match the branch;
	// none when nothing is known, and every text may match.
	sets []int
}

// may reports whether a text may match b, given which needles' sets it holds a string of
// (hit) and the needles' numbers of the pattern's sets (ids).
func (b branch) may(hit []bool, ids []int32) bool {
	for _, i := range b.sets {
		if !hit[ids[i]] {
			return false
		}
	}
	return true
}

// maxBranches bounds the branches of a Pattern: a concatenation of alternations multiplies them.
const maxBranches = 512

// MustPattern compiles expr as regexp.MustCompile does. Its branches are worked out on first
// use.
func MustPattern(expr string) *Pattern {
	p := &Pattern{Regexp: regexp.MustCompile(expr)}
	p.parts = sync.OnceValue(func() parts {
		r, err := syntax.Parse(expr, syntax.Perl) // regexp.Compile's own flags
		if err != nil {
			panic(err) // regexp.MustCompile accepted it
		}
		bs := split(r)
		if len(bs) > maxBranches {
			bs = []*syntax.Regexp{r}
		}
		var ps parts
		for _, b := range bs {
			br := branch{re: func() *regexp.Regexp { return p.Regexp }}
			if len(bs) > 1 {
				br.re = sync.OnceValue(func() *regexp.Regexp { return compileBranch(p, b) })
			}
			for _, set := range needed(b) {
				br.sets = append(br.sets, len(ps.sets))
				ps.sets = append(ps.sets, set)
			}
			ps.branches = append(ps.branches, br)
		}
		sets := ps.sets
		ps.need = sync.OnceValue(func() *needles { return newNeedles(sets) })
		return ps
	})
	return p
}

// compileBranch compiles branch b of p from its syntax, if the expression it prints compiles to
// the same program, and otherwise returns p's own expression: run for a branch, it answers
// whether p matches, which is the question the branch is asked for.
func compileBranch(p *Pattern, b *syntax.Regexp) *regexp.Regexp {
	expr := b.String()
	again, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return p.Regexp
	}
	want, err1 := syntax.Compile(b.Simplify())
	got, err2 := syntax.Compile(again.Simplify())
	if err1 != nil || err2 != nil || want.String() != got.String() {
		return p.Regexp
	}
	return regexp.MustCompile(expr)
}

// MatchString reports whether s holds a match of the pattern: of one of its branches.
func (p *Pattern) MatchString(s string) bool {
	n := p.parts().need()
	return p.match(s, n.hits(s), n.ids)
}

// match is MatchString given which needles' sets s holds a string of and the needles' numbers
// of the pattern's sets.
func (p *Pattern) match(s string, hit []bool, ids []int32) bool {
	for _, b := range p.parts().branches {
		if b.may(hit, ids) && b.re().MatchString(s) {
			return true
		}
	}
	return false
}

// Patterns are patterns matched against the same texts: one pass over a text (Scan) finds the
// needed strings of all of them, where each pattern's MatchString makes a pass of its own.
type Patterns struct {
	list []*Pattern
	base map[*Pattern]int // where a pattern's needed sets start among all
	need func() *needles
}

// NewPatterns returns an empty set; Add patterns to it before its first Scan.
func NewPatterns() *Patterns {
	ps := &Patterns{base: map[*Pattern]int{}}
	ps.need = sync.OnceValue(func() *needles {
		var sets [][]string
		for _, p := range ps.list {
			ps.base[p] = len(sets)
			sets = append(sets, p.parts().sets...)
		}
		return newNeedles(sets)
	})
	return ps
}

// Add adds p to the set and returns it; only before the set's first Scan.
func (ps *Patterns) Add(p *Pattern) *Pattern {
	ps.list = append(ps.list, p)
	return p
}

// Scanned is a text scanned for the needed strings of a set of patterns.
type Scanned struct {
	text string
	set  *Patterns
	hit  []bool
}

// Scan scans text for the needed strings of every pattern in the set.
func (ps *Patterns) Scan(text string) *Scanned {
	return &Scanned{text: text, set: ps, hit: ps.need().hits(text)}
}

// Match reports whether the scanned text holds a match of p, a pattern of the set.
func (t *Scanned) Match(p *Pattern) bool {
	base, ok := t.set.base[p]
	if !ok {
		panic("classify: a pattern matched against a set it is not in")
	}
	return p.match(t.text, t.hit, t.set.need().ids[base:base+len(p.parts().sets)])
}

// FindAllStringSubmatchIndex is regexp's, without running the engine on a text that cannot
// match.
func (p *Pattern) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !p.mayMatch(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatchIndex(s, n)
}

// ReplaceAllString is regexp's, without running the engine on a text that cannot match.
func (p *Pattern) ReplaceAllString(src, repl string) string {
	if !p.mayMatch(src) {
		return src
	}
	return p.Regexp.ReplaceAllString(src, repl)
}

// mayMatch reports whether s may match some branch of p.
func (p *Pattern) mayMatch(s string) bool {
	ps := p.parts()
	n := ps.need()
	hit := n.hits(s)
	return slices.ContainsFunc(ps.branches, func(b branch) bool { return b.may(hit, n.ids) })
}

// split returns branches of r, a match of r being a match of one of them: its alternatives,
// with concatenation distributed over alternation. Captures are left out, since only whether a
// branch matches is asked.
func split(r *syntax.Regexp) []*syntax.Regexp {
	switch r.Op {
	case syntax.OpCapture:
		return split(r.Sub[0])
	case syntax.OpAlternate:
		var out []*syntax.Regexp
		for _, s := range r.Sub {
			out = append(out, split(s)...)
			if len(out) > maxBranches {
				return []*syntax.Regexp{r}
			}
		}
		return out
	case syntax.OpConcat:
		for i, s := range r.Sub {
			alts := split(s)
			if len(alts) == 1 {
				continue
			}
			var out []*syntax.Regexp
			for _, a := range alts {
				subs := slices.Concat(r.Sub[:i:i], []*syntax.Regexp{a}, r.Sub[i+1:])
				out = append(out, split(&syntax.Regexp{Op: syntax.OpConcat, Flags: r.Flags, Sub: subs})...)
				if len(out) > maxBranches {
					return []*syntax.Regexp{r}
				}
			}
			return out
		}
	}
	return []*syntax.Regexp{r}
}

// needles finds which of several sets of strings a text holds a string of, in one pass over
// it: an Aho-Corasick automaton of all their distinct strings, every match of which, overlapping
// ones too (a string inside another counts), marks the sets holding its string.
type needles struct {
	sets int     // the distinct sets
	ids  []int32 // the number among them of each set given
	ac   *ahocorasick.Automaton
	in   [][]int32 // the sets holding each of ac's strings, by its pattern number
}

// newNeedles builds the automaton of sets of strings.
func newNeedles(sets [][]string) *needles {
	distinct := map[string]int32{}
	ids := make([]int32, len(sets))
	number := map[string]int{} // a string's pattern number in the automaton
	var strs []string
	var in [][]int32
	for k, set := range sets {
		key := fmt.Sprintf("%q", set) // the same for equal sets (needed sorts them), only for them
		i, seen := distinct[key]
		if !seen {
			i = int32(len(distinct))
			distinct[key] = i
		}
		ids[k] = i
		if seen {
			continue
		}
		for _, s := range set {
			p, ok := number[s]
			if !ok {
				p = len(strs)
				number[s] = p
				strs = append(strs, s)
				in = append(in, nil)
			}
			in[p] = append(in[p], i)
		}
	}
	n := &needles{sets: len(distinct), ids: ids, in: in}
	if len(strs) > 0 {
		ac, err := ahocorasick.NewBuilder().AddStrings(strs).Build()
		if err != nil {
			panic(err) // it refuses only the empty string, which needed never keeps (usable)
		}
		n.ac = ac
	}
	return n
}

// hits returns which sets s holds a string of.
func (n *needles) hits(s string) []bool {
	hit := make([]bool, n.sets)
	if n.ac == nil {
		return hit
	}
	for _, m := range n.ac.FindAllOverlapping([]byte(s)) {
		for _, set := range n.in[m.PatternID] {
			hit[set] = true
		}
	}
	return hit
}

const (
	// maxExact bounds the sets of strings a part of a pattern matches (literals).
	maxExact = 256
	// maxNeed bounds a needed set: a list of words that long is no cheap test.
	maxNeed = 1000
)

// needed returns sets of strings such that every match of r holds a string of each, or nil
// when none is known.
func needed(r *syntax.Regexp) [][]string {
	var out [][]string
	for _, set := range conjunction(r) {
		if len(set) > maxNeed || slices.ContainsFunc(set, common) {
			continue
		}
		// A string that holds another of its set adds nothing: drop it.
		set = slices.Clone(set)
		slices.SortFunc(set, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
		var kept []string
		for _, n := range set {
			if !slices.ContainsFunc(kept, func(o string) bool { return strings.Contains(n, o) }) {
				kept = append(kept, n)
			}
		}
		if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, kept) }) {
			out = append(out, kept)
		}
	}
	return out
}

// common reports whether a needed string is in most texts: a letter, a digit or a space. A set
// that holds one is left out, as if nothing were known of it.
func common(s string) bool {
	return len(s) == 1 && (isWordByte(s[0]) || s[0] == ' ')
}

// isWordByte reports whether b is a word character as \w reads it.
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// literals analyses r: exact is every string r can match, reading its empty-width assertions
// (^, $, \b) as the empty string, or nil when they are too many or not known (a repetition,
// a wide class, case folding); need is sets of strings such that every match of r holds a
// string of each. Reading assertions as "" only makes the sets larger than the matches need,
// so both stay sound.
func literals(r *syntax.Regexp) (exact []string, need [][]string) {
	switch r.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, nil
	case syntax.OpLiteral:
		if slices.Contains(r.Rune, utf8.RuneError) {
			return nil, nil // U+FFFD matches any invalid byte
		}
		if r.Flags&syntax.FoldCase == 0 {
			return []string{string(r.Rune)}, nil
		}
		// Case folded, a rune matches any rune of its orbit under unicode.SimpleFold ("s",
		// "S", "ſ"): every spelling, while they are few.
		out := []string{""}
		for _, c := range r.Rune {
			var next []string
			for f := c; ; {
				for _, o := range out {
					next = append(next, o+string(f))
				}
				if f = unicode.SimpleFold(f); f == c {
					break
				}
			}
			if len(next) > maxExact {
				return nil, nil
			}
			out = next
		}
		return out, nil
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(r.Rune); i += 2 {
			lo, hi := r.Rune[i], r.Rune[i+1]
			if hi-lo >= 16 || lo <= utf8.RuneError && utf8.RuneError <= hi {
				return nil, nil
			}
			for c := lo; c <= hi; c++ {
				out = append(out, string(c))
			}
			if len(out) > 16 {
				return nil, nil
			}
		}
		return out, nil
	case syntax.OpCapture:
		return literals(r.Sub[0])
	case syntax.OpQuest:
		if exact, _ := literals(r.Sub[0]); exact != nil {
			return append([]string{""}, exact...), nil
		}
		return nil, nil
	case syntax.OpPlus:
		return nil, conjunction(r.Sub[0])
	case syntax.OpRepeat:
		if r.Min >= 1 {
			return nil, conjunction(r.Sub[0])
		}
		return nil, nil
	case syntax.OpConcat:
		return concatLiterals(r.Sub)
	case syntax.OpAlternate:
		// A match of an alternation is a match of one of its parts: it holds a string of the
		// union of one needed set of each.
		var exact, need []string
		exactOK, needOK := true, true
		for _, s := range r.Sub {
			e, _ := literals(s)
			exactOK = exactOK && e != nil && len(exact)+len(e) <= maxExact
			if exactOK {
				exact = append(exact, e...)
			}
			n := best(conjunction(s))
			needOK = needOK && n != nil
			if needOK {
				need = append(need, n...)
			}
		}
		switch {
		case exactOK:
			return exact, nil // need says no more
		case needOK:
			return nil, [][]string{need}
		}
		return nil, nil
	}
	// Any character, a star, no match: nothing known.
	return nil, nil
}

// conjunction returns sets of strings such that every match of r holds a string of each: its
// needed sets, and its exact set when that says anything.
func conjunction(r *syntax.Regexp) [][]string {
	exact, need := literals(r)
	if usable(exact) {
		return append([][]string{exact}, need...)
	}
	return need
}

// best returns the set of a conjunction that rules out the most, or nil.
func best(sets [][]string) []string {
	var b []string
	for _, s := range sets {
		if better(s, b) {
			b = s
		}
	}
	return b
}

// concatLiterals is literals of a concatenation: runs of parts with exact sets are multiplied
// out, and every match holds a string of the best set of each run (the run or one of its
// starts) and of every needed set of the other parts.
func concatLiterals(subs []*syntax.Regexp) (exact []string, need [][]string) {
	run := []string{""}
	var runBest []string // the best set of the run so far: itself or one of its starts
	exactOK := true
	consider := func(set []string) {
		if usable(set) && better(set, runBest) {
			runBest = set
		}
	}
	endRun := func() {
		consider(run)
		if runBest != nil {
			need = append(need, runBest)
		}
		run, runBest = []string{""}, nil
	}
	for _, s := range subs {
		e, n := literals(s)
		if e == nil {
			exactOK = false
			endRun()
			need = append(need, n...)
			continue
		}
		need = append(need, n...)
		if len(run)*len(e) > maxExact {
			exactOK = false
			endRun()
			run = slices.Clone(e)
			continue
		}
		next := make([]string, 0, len(run)*len(e))
		for _, a := range run {
			for _, b := range e {
				next = append(next, a+b)
			}
		}
		consider(run)
		run = next
	}
	if exactOK {
		exact = run
	}
	endRun()
	return exact, need
}

// usable reports whether a needed set says anything: the empty string is in every text.
func usable(set []string) bool { return len(set) > 0 && !slices.Contains(set, "") }

// better reports whether needed set a rules out more texts than b (or b is nil): its shortest
// string is longer, or as long and it has fewer strings.
func better(a, b []string) bool {
	if !usable(a) {
		return false
	}
	if b == nil {
		return true
	}
	short := func(set []string) int {
		return len(slices.MinFunc(set, func(x, y string) int { return cmp.Compare(len(x), len(y)) }))
	}
	if sa, sb := short(a), short(b); sa != sb {
		return sa > sb
	}
	return len(a) < len(b)
}
