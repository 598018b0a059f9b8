// Package fold writes text in the form ragd compares it in: its words lower-cased and joined by
// one space. dedupe compares passages in it (re-published copies differ in capitalization and
// line wrapping) and citations compares sentences with a source's title and headings in it; one
// writer keeps the two comparisons from drifting apart.
package fold

import (
	"unicode"
	"unicode/utf8"
)

// AppendWords appends to b the words of s, split at white space as strings.Fields splits,
// lower-cased as strings.ToLower lower-cases (invalid UTF-8 becoming U+FFFD), joined by one
// space: strings.Join(strings.Fields(strings.ToLower(s)), " ") in one pass that allocates only
// to grow b. ASCII, most of any text, goes a byte at a time; other runes as unicode says.
func AppendWords(b []byte, s string) []byte {
	start, space := len(b), false
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		i += n
		if r < utf8.RuneSelf && asciiSpace[r] || r >= utf8.RuneSelf && unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(b) > start {
			b = append(b, ' ')
		}
		space = false
		switch {
		case 'A' <= r && r <= 'Z':
			b = append(b, byte(r+'a'-'A'))
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
		default:
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
	}
	return b
}

// asciiSpace is unicode.IsSpace of the ASCII runes.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
