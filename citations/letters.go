package citations

import "math"

// maxLetters is the length of Letter(math.MaxInt): 26^14 > 2^63.
const maxLetters = 14

// Letter returns the marker letter of the n-th document of a conversation, counting from 0:
// A..Z, AA, AB, ..., AZ, BA, ..., ZZ, AAA. It is bijective base 26, like spreadsheet columns,
// so every letter string names exactly one n. It returns "" for a negative n.
func Letter(n int) string {
	if n < 0 {
		return ""
	}
	var buf [maxLetters]byte
	i := len(buf)
	// Digits run 1..26 instead of 0..25, which is what makes the base bijective: n+1 written
	// that way, with A standing for 1.
	for v := uint64(n) + 1; v > 0; v = (v - 1) / 26 {
		i--
		buf[i] = 'A' + byte((v-1)%26)
	}
	return string(buf[i:])
}

// LetterIndex is the inverse of Letter. It returns -1 for anything that is not a non-empty run
// of upper-case ASCII letters, and for letters beyond Letter(math.MaxInt).
func LetterIndex(s string) int {
	if s == "" || len(s) > maxLetters {
		return -1
	}
	var v uint64
	for i := range len(s) {
		c := s[i]
		if c < 'A' || c > 'Z' {
			return -1
		}
		if v > math.MaxInt/26 { // the index would pass math.MaxInt
			return -1
		}
		v = v*26 + uint64(c-'A') + 1
	}
	if v-1 > math.MaxInt {
		return -1
	}
	return int(v - 1)
}
