package focus

import (
	"strings"
	"unicode"
)

// pointers are words by which a turn points back at the conversation.
var pointers = map[string]bool{"it": true, "its": true, "they": true, "them": true, "their": true, "this": true,
	"that": true, "these": true, "those": true, "he": true, "she": true, "his": true, "her": true, "there": true,
	"one": true, "ones": true, "same": true, "such": true, "former": true, "latter": true}

// PointsBack reports whether a turn names its subject only through the conversation: it points
// back ("any cures for it?", "is that place quiet?") or says almost nothing by itself (three
// words or fewer: "regional differences").
func PointsBack(text string) bool {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	for _, w := range words {
		if pointers[w] {
			return true
		}
	}
	return len(words) <= 3
}

// Lean says how much a turn leans on the conversation, from 0 to 1: 0 for a turn that names a
// title of its own (it is left alone: its own search finds its subject), 1 for one that points
// back, and implicit for one that does neither ("do you know anything about the views from the
// rooms?" names no hotel, but is about one).
func Lean(text string, namesOwn bool, implicit float64) float64 {
	switch {
	case namesOwn:
		return 0
	case PointsBack(text):
		return 1
	}
	return implicit
}

// Said is how much of its weight a search that adds a name to a turn's words keeps, from 0 to 1,
// given how much the turn says by itself: info is the information of its own words, in words
// (a word only one chunk has counts 1), and enough how much a turn may say and still need the
// name fully. A turn that says more names its subject itself, though no title, and the added
// name's words would displace its own: the search keeps enough/info (saying twice enough, half).
// enough 0, or an unknown info (0), keeps the whole weight.
func Said(info, enough float64) float64 {
	if enough == 0 || info <= enough {
		return 1
	}
	return enough / info
}
