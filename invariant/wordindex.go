package invariant

import (
	"fmt"
	"regexp/syntax"
	"strings"
)

// wordIndex finds, in one pass over a text's words, which of several word lists it names. A list
// is written as a regular expression's alternatives that the text must hold as whole words, as
// the cues' patterns are (`\b(?:...)\b`); it may use literals, classes, ?, groups and `\w*` right
// before a word's end (a stem). Each alternative is spelled out once, when the index is built, and
// looked up by its first word (or stem), so a text costs a few map lookups per word however long
// the lists are, where the same lists as regular expressions cost hundreds of microseconds a
// message.
type wordIndex struct {
	exact   map[string][]wordEntry // by an alternative's first word
	stem    map[string][]wordEntry // by the stem an alternative opens with
	other   []wordEntry            // alternatives that open with no word character
	maxStem int
}

// wordEntry is one spelled-out alternative: its bytes, with wordStar where `\w*` stands, and the
// lists it is in.
type wordEntry struct {
	s    string
	mask uint64
}

// wordStar marks `\w*` in a spelled-out alternative: any run of word characters.
const wordStar = '\x00'

// maxSpelled bounds the spellings of one list: a list that would spell out to more is a mistake.
const maxSpelled = 100000

// newWordIndex indexes lists; list i sets bit i of what find returns. It panics on a list it
// cannot spell out, since the lists are the program's own.
func newWordIndex(lists []string) *wordIndex {
	if len(lists) > 64 {
		panic("invariant: more than 64 word lists")
	}
	masks := map[string]uint64{}
	for i, l := range lists {
		r, err := syntax.Parse(`(?:`+l+`)`, syntax.Perl)
		if err != nil {
			panic(fmt.Sprintf("invariant: word list %d: %v", i, err))
		}
		for _, s := range spell(r) {
			if s == "" || s[0] == wordStar {
				panic(fmt.Sprintf("invariant: word list %d: an alternative may be empty or open with \\w*", i))
			}
			masks[s] |= 1 << i
		}
	}
	x := &wordIndex{exact: map[string][]wordEntry{}, stem: map[string][]wordEntry{}}
	for s, m := range masks {
		e := wordEntry{s, m}
		n := 0
		for n < len(s) && isWordByte(s[n]) {
			n++
		}
		switch {
		case n == 0:
			x.other = append(x.other, e)
		case n < len(s) && s[n] == wordStar:
			x.stem[s[:n]] = append(x.stem[s[:n]], e)
			x.maxStem = max(x.maxStem, n)
		default:
			x.exact[s[:n]] = append(x.exact[s[:n]], e)
		}
	}
	return x
}

// spell returns every string r matches, with wordStar for `\w*`.
func spell(r *syntax.Regexp) []string {
	if r.Flags&syntax.FoldCase != 0 {
		panic("invariant: word lists are lower case, without (?i)")
	}
	switch r.Op {
	case syntax.OpEmptyMatch:
		return []string{""}
	case syntax.OpLiteral:
		return []string{string(r.Rune)}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(r.Rune); i += 2 {
			for c := r.Rune[i]; c <= r.Rune[i+1]; c++ {
				out = append(out, string(c))
			}
		}
		if len(out) > 64 {
			panic("invariant: a word list's class is too wide: " + r.String())
		}
		return out
	case syntax.OpCapture:
		return spell(r.Sub[0])
	case syntax.OpQuest:
		return append([]string{""}, spell(r.Sub[0])...)
	case syntax.OpStar:
		if r.Sub[0].String() != `[0-9A-Z_a-z]` {
			panic("invariant: a word list may repeat only \\w: " + r.String())
		}
		return []string{string(wordStar)}
	case syntax.OpAlternate:
		var out []string
		for _, s := range r.Sub {
			out = append(out, spell(s)...)
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range r.Sub {
			var next []string
			for _, a := range out {
				for _, b := range spell(s) {
					next = append(next, a+b)
				}
			}
			if len(next) > maxSpelled {
				panic("invariant: a word list spells out to too many alternatives")
			}
			out = next
		}
		for _, s := range out {
			if i := strings.IndexByte(s, wordStar); i >= 0 && i+1 < len(s) && isWordByte(s[i+1]) {
				panic("invariant: \\w* in a word list must end a word: " + r.String())
			}
		}
		return out
	}
	panic("invariant: a word list may not use " + r.String())
}

// find returns the lists that text names, as bits: list i is named when one of its
// alternatives occurs in text between word boundaries.
func (x *wordIndex) find(text string) uint64 {
	var mask uint64
	check := func(es []wordEntry, i int) {
		for _, e := range es {
			if e.mask&^mask != 0 && matchesAt(e.s, text, i) {
				mask |= e.mask
			}
		}
	}
	for i := 0; i < len(text); i++ {
		if !isWordByte(text[i]) {
			if i > 0 && isWordByte(text[i-1]) {
				check(x.other, i)
			}
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		check(x.exact[text[i:j]], i)
		for k := i + 1; k <= j && k-i <= x.maxStem; k++ {
			check(x.stem[text[i:k]], i)
		}
	}
	return mask
}

// matchesAt reports whether the spelled-out alternative s occurs in text at i and ends on a word
// boundary (i is on one: find only tries those).
func matchesAt(s, text string, i int) bool {
	for k := 0; k < len(s); k++ {
		if s[k] == wordStar {
			for i < len(text) && isWordByte(text[i]) {
				i++
			}
			continue
		}
		if i >= len(text) || text[i] != s[k] {
			return false
		}
		i++
	}
	return isWordByte(text[i-1]) != (i < len(text) && isWordByte(text[i]))
}

// isWordByte reports whether b is a word character as `\b` and `\w` read it (ASCII).
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
