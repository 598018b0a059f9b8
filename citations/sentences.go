package citations

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentence is one sentence of a text. Start and End are byte offsets into that text, so
// text[Start:End] == Text.
type Sentence struct {
	Text       string
	Start, End int
}

// Sentences splits text into sentences. A sentence ends
//
//   - at . ! ? or … (with any closing quotes and brackets after them) when white space and then
//     a capital letter, a digit, an opening quote or an opening parenthesis follow;
//   - at a blank line;
//   - at the end of a line that is a list item ("- ", "* ", "• ", "1. ", "2) ") or a markdown
//     heading, or of the line before a list item. Other line breaks are wrapping and do not end
//     a sentence.
//
// A full stop does not end a sentence after a common abbreviation (e.g. i.e. etc. vs. Dr. Mr.
// Fig. et al., "No." before a number), after dotted initialisms (U.S., Ph.D.), after a single
// capital letter ("J. Smith"; so "vitamin C. Then" stays one sentence, the cheaper mistake), or
// after the number that opens a numbered list item. Decimals ("3.5") and names like
// "example.com" never split because no space follows the dot.
//
// Sentences are trimmed of white space and of a leading list marker; sentences without a letter
// or digit are dropped. The rules are for English prose and are meant to be cheap, not perfect.
func Sentences(text string) []Sentence {
	var out []Sentence
	start := 0
	cut := func(end int) {
		if s, ok := trimSentence(text, start, end); ok {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			if lineEndsSentence(text, i) {
				cut(i)
			}
			i += size
		case isTerminator(r):
			end := pastTerminator(text, i)
			if stopEndsSentence(text, start, i, end) {
				cut(end)
			}
			i = end
		default:
			i += size
		}
	}
	cut(len(text))
	return out
}

func isTerminator(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', '»', ')', ']':
		return true
	}
	return false
}

func isOpener(r rune) bool {
	switch r {
	case '"', '\'', '“', '‘', '«', '(':
		return true
	}
	return false
}

// pastTerminator returns the offset after the run of terminators and closers that starts at i,
// so that "?!" and a closing quote stay with the sentence they end.
func pastTerminator(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTerminator(r) && !isCloser(r) {
			break
		}
		i += size
	}
	return i
}

// stopEndsSentence reports whether the terminator run text[i:end] ends the sentence that began
// at start.
func stopEndsSentence(text string, start, i, end int) bool {
	if end == len(text) {
		return false // the text's end closes the sentence anyway
	}
	if r, _ := utf8.DecodeRuneInString(text[end:]); !unicode.IsSpace(r) {
		return false
	}
	k := end
	for k < len(text) {
		r, size := utf8.DecodeRuneInString(text[k:])
		if !unicode.IsSpace(r) {
			break
		}
		k += size
	}
	if k == len(text) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(text[k:])
	if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !isOpener(next) {
		return false
	}
	// Only a lone full stop can be an abbreviation's; "...", "?" and "!" always end.
	if text[i] != '.' || (i+1 < len(text) && isTerminator(rune(text[i+1]))) {
		return true
	}
	wordStart := i
	for wordStart > start {
		r, size := utf8.DecodeLastRuneInString(text[start:wordStart])
		if unicode.IsSpace(r) {
			break
		}
		wordStart -= size
	}
	word := strings.TrimLeftFunc(text[wordStart:i], isOpener)
	first := strings.TrimSpace(text[start:wordStart]) == ""
	return !isAbbreviation(word, next, first)
}

// abbreviations are lower-cased, without their final full stop. Dotted ones like "e.g" are
// caught by the initialism rule.
var abbreviations = map[string]bool{
	"etc": true, "vs": true, "al": true, "cf": true, "approx": true,
	"dr": true, "mr": true, "mrs": true, "ms": true, "prof": true, "st": true, "jr": true, "sr": true,
	"fig": true, "figs": true, "vol": true, "pp": true, "inc": true, "ltd": true,
}

// isAbbreviation reports whether the full stop after word belongs to the word instead of ending
// a sentence. next is the first rune after the following space; first says whether word opens
// the sentence.
func isAbbreviation(word string, next rune, first bool) bool {
	switch {
	case word == "":
		return false
	case abbreviations[strings.ToLower(word)]:
		return true
	case word == "No" && unicode.IsDigit(next): // "No. 5", but not "The answer is No. Then…"
		return true
	case isInitial(word): // "J. Smith"
		return true
	case isInitialism(word):
		return true
	case first && isEnumerator(word): // "2. Open the windows." opening a list item
		return true
	}
	return false
}

// isInitial reports whether word is a single capital letter.
func isInitial(word string) bool {
	r, size := utf8.DecodeRuneInString(word)
	return size == len(word) && unicode.IsUpper(r)
}

// isInitialism reports whether word is letters in dotted groups of one or two, like "U.S",
// "e.g" or "Ph.D" (the final dot is not part of word). "example.com" is not.
func isInitialism(word string) bool {
	if !strings.Contains(word, ".") {
		return false
	}
	for part := range strings.SplitSeq(word, ".") {
		n := utf8.RuneCountInString(part)
		if n == 0 || n > 2 || strings.IndexFunc(part, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return false
		}
	}
	return true
}

// isEnumerator reports whether word is a list number: one to three digits.
func isEnumerator(word string) bool {
	if word == "" || len(word) > 3 {
		return false
	}
	for i := range len(word) {
		if word[i] < '0' || word[i] > '9' {
			return false
		}
	}
	return true
}

// lineEndsSentence reports whether the line break at text[i] also ends a sentence: when it ends
// a paragraph, a list item or a heading, or when a list item follows.
func lineEndsSentence(text string, i int) bool {
	line := text[strings.LastIndexByte(text[:i], '\n')+1 : i]
	next := text[i+1:]
	if j := strings.IndexByte(next, '\n'); j >= 0 {
		next = next[:j]
	}
	switch {
	case strings.TrimSpace(next) == "":
		return true
	case listMarkerLen(next) > 0:
		return true
	case strings.HasPrefix(strings.TrimSpace(line), "#"):
		return true
	}
	// An indented line after a list item continues the item.
	r, _ := utf8.DecodeRuneInString(next)
	return listMarkerLen(line) > 0 && !unicode.IsSpace(r)
}

// listMarkerLen returns the length of the list marker that opens line, with the space around it,
// or 0 when line is not a list item. Markers are a bullet ("-", "*", "+", "•", "◦", "‣", "–")
// or one to three digits with "." or ")", followed by white space.
func listMarkerLen(line string) int {
	body := strings.TrimLeftFunc(line, unicode.IsSpace)
	r, size := utf8.DecodeRuneInString(body)
	var n int
	switch r {
	case '-', '*', '+', '•', '◦', '‣', '–':
		n = size
	default:
		for n < len(body) && n < 3 && body[n] >= '0' && body[n] <= '9' {
			n++
		}
		if n == 0 || n == len(body) || (body[n] != '.' && body[n] != ')') {
			return 0
		}
		n++
	}
	rest := body[n:]
	after := strings.TrimLeftFunc(rest, unicode.IsSpace)
	if len(after) == len(rest) || after == "" {
		return 0 // "-5 degrees" or "3.5" is not a list item, nor a lone marker
	}
	return len(line) - len(after)
}

// trimSentence makes text[start:end] a Sentence: trimmed of white space and of a leading list
// marker. ok is false when nothing with a letter or digit is left.
func trimSentence(text string, start, end int) (s Sentence, ok bool) {
	seg := text[start:end]
	lead := len(seg) - len(strings.TrimLeftFunc(seg, unicode.IsSpace))
	seg = strings.TrimSpace(seg)
	if n := listMarkerLen(seg); n > 0 {
		lead += n
		seg = seg[n:]
	}
	if strings.IndexFunc(seg, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return Sentence{}, false
	}
	return Sentence{Text: seg, Start: start + lead, End: start + lead + len(seg)}, true
}
