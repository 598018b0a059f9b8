package kg

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// class is what a token can be to Extract.
type class uint8

const (
	classOther     class = iota // ends a phrase and is no entity: lower-case words, numbers, function words
	classConnector              // may join capitalized words into one phrase: of, the, de, &
	classCapital                // a capitalized word: "Bank"
	classMixed                  // a capital and an inner capital: "PostgreSQL"; code alone, a word in a phrase
	classAcronym                // "NFL", "S3"
	classRoman                  // a Roman numeral ("II"): continues a phrase, else an acronym
	classCode                   // an identifier, flag, path or backticked span
	classLink                   // a URL
)

// token is one word of a text, stripped of the punctuation around it.
type token struct {
	text  string // as written, without surrounding punctuation or a possessive
	name  string // the entity name it would give (lower-cased); empty for classOther
	class class
	// start: the token opens a sentence.
	start bool
	// join: only spaces separate the token from the one before, so a phrase may run on.
	join bool
	// caps: letters, and none of them lower-case. Counted for shouting.
	caps bool
	// shouted: one of more than maxShout caps tokens in a row.
	shouted bool
}

// wrapWidth tells a wrapped line from a short one. A single line break continues the sentence
// only after a line this long: hard-wrapped prose fills its lines, while titles, list items and
// table rows, which begin something new, are short.
const wrapWidth = 50

// maxCodeSpan bounds a backticked span that counts as an entity; longer spans are code, not
// the name of something.
const maxCodeSpan = 64

// tokenize splits text into tokens, marking sentence starts and where phrases may continue.
// It is a single hand-written pass, without regular expressions, because it runs on every chunk.
func tokenize(text string) []token {
	t := tokenizer{toks: make([]token, 0, len(text)/6+1), sentence: true, lineStart: true}
	line := 0 // where the current line begins
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			if len(strings.TrimSpace(text[line:i])) < wrapWidth {
				t.sentence, t.join = true, false
			}
			i++
			line = i
			t.lineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '`':
			i = t.backticks(text, i)
			continue
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				i += size
				continue
			}
			if isDash(r) { // "Microsoft—the company": a break between two words
				t.join = false
				i += size
				continue
			}
		}
		j := i
		for j < len(text) && text[j] != '`' && !isBreakAt(text, j) {
			j++
		}
		t.field(text[i:j])
		t.lineStart = false
		i = j
	}
	return t.toks
}

// isBreakAt reports whether white space or a dash starts at text[i]: either ends a word.
func isBreakAt(text string, i int) bool {
	c := text[i]
	if c < utf8.RuneSelf {
		return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsSpace(r) || isDash(r)
}

// isDash reports whether r is an en or em dash, which writers set between words without spaces.
func isDash(r rune) bool {
	return r == '—' || r == '–'
}

// tokenizer is the state of tokenize between fields.
type tokenizer struct {
	toks []token
	// sentence: the next word opens a sentence.
	sentence bool
	// join: the next word may continue a phrase.
	join bool
	// lineStart: the next field is the first on its line.
	lineStart bool
}

// backticks handles the backticks at text[i] and returns where scanning goes on. A fence of
// three or more skips a code block; one or two open an inline span that ends at the same number
// of backticks on the same line.
func (t *tokenizer) backticks(text string, i int) int {
	n := 0
	for i+n < len(text) && text[i+n] == '`' {
		n++
	}
	fence := text[i : i+n]
	t.join = false
	if n >= 3 {
		t.sentence = true
		end := strings.Index(text[i+n:], fence)
		if end < 0 {
			return len(text)
		}
		return i + n + end + n
	}
	end := strings.Index(text[i+n:], fence)
	if end < 0 {
		return i + n // a stray backtick is punctuation
	}
	span := text[i+n : i+n+end]
	if strings.IndexByte(span, '\n') >= 0 {
		return i + n
	}
	// A call names its function, as it does outside backticks: `os.path.join()` is os.path.join.
	span = strings.TrimSuffix(strings.TrimSpace(span), "()")
	if span != "" && len(span) <= maxCodeSpan {
		name := strings.ToLower(span)
		if strings.ContainsAny(name, " \t") {
			name = strings.Join(strings.Fields(name), " ")
		}
		t.toks = append(t.toks, token{text: span, name: name, class: classCode, start: t.sentence})
		t.sentence = false
	}
	return i + n + end + n
}

// field turns one run of non-space characters into a token, or into phrase and sentence breaks
// when it is punctuation alone.
func (t *tokenizer) field(f string) {
	core := strings.TrimLeftFunc(f, isLeadingPunct)
	lead := len(f) - len(core)
	core = strings.TrimRightFunc(core, isTrailingPunct)
	trail := f[lead+len(core):]

	possessive := false
	if s, ok := strings.CutSuffix(core, "'s"); ok {
		core, possessive = s, true
	} else if s, ok := strings.CutSuffix(core, "’s"); ok {
		core, possessive = s, true
	}

	letters, lower := letterCase(core)
	if !letters && core != "&" {
		// Punctuation, a number or a list marker: no entity, and no phrase runs across it.
		switch {
		case strings.ContainsAny(trail, ".!?:…"), strings.Contains(core, "|"), t.lineStart && isBullet(f):
			t.sentence = true // "1.", a table cell, a list item
		}
		t.join = false
		return
	}
	c, name, text := classify(core)
	t.toks = append(t.toks, token{
		text:  text,
		name:  name,
		class: c,
		start: t.sentence,
		join:  t.join && lead == 0,
		caps:  letters && !lower,
	})
	t.sentence = strings.ContainsAny(trail, ".!?:…") && !(trail[0] == '.' && abbreviations[strings.ToLower(core)])
	t.join = trail == "" && !possessive
}

// isLeadingPunct reports whether r is punctuation that may open a word: brackets, quotes and
// markdown emphasis.
func isLeadingPunct(r rune) bool {
	switch r {
	case '(', '[', '{', '<', '"', '\'', '*', '“', '‘', '«':
		return true
	}
	return false
}

// isTrailingPunct reports whether r is punctuation that may close a word. "(" is here so that a
// call like "os.path.join()" keeps only its name.
func isTrailingPunct(r rune) bool {
	switch r {
	case ')', ']', '}', '>', '"', '\'', '*', '.', ',', ';', ':', '!', '?', '(', '”', '’', '»', '…':
		return true
	}
	return false
}

// isBullet reports whether f is a list-item or heading marker: "-", "*", "•", "#", "1.", "2)".
func isBullet(f string) bool {
	f = strings.TrimRight(f, ".)")
	if f == "" {
		return false
	}
	if strings.Trim(f, "0123456789") == "" {
		return true
	}
	return strings.Trim(f, "-*+•#>") == ""
}

// letterCase reports whether s has letters and whether any of them is lower-case.
func letterCase(s string) (letters, lower bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			for _, r := range s[i:] {
				if unicode.IsLetter(r) {
					letters = true
					lower = lower || unicode.IsLower(r)
				}
			}
			return letters, lower
		case 'a' <= c && c <= 'z':
			letters, lower = true, true
		case 'A' <= c && c <= 'Z':
			letters = true
		}
	}
	return letters, lower
}

// maxShout is the longest run of all-capitals words that still reads as acronyms ("USE THE
// AWS API"); past it, the text is shouting.
const maxShout = 4

// markShouting marks the tokens of every run of more than maxShout all-capitals tokens.
// Tokens without letters (numbers) neither extend nor end a run: they are not in toks.
func markShouting(toks []token) {
	run := 0
	for i := range toks {
		if !toks[i].caps {
			run = 0
			continue
		}
		run++
		switch {
		case run == maxShout+1:
			for j := i - maxShout; j <= i; j++ {
				toks[j].shouted = true
			}
		case run > maxShout+1:
			toks[i].shouted = true
		}
	}
}

// classify says what a word is and the entity name it gives. It returns the text to show, which
// is w without a call's arguments ("getUser(id" is "getUser").
func classify(w string) (class, string, string) {
	if isLowerWord(w) { // most words of a text: only a connector matters
		if connectors[w] {
			return classConnector, w, w
		}
		return classOther, "", w
	}
	if hasPrefixFold(w, "https://") || hasPrefixFold(w, "http://") {
		if name, ok := canonicalLink(w); ok {
			return classLink, name, w
		}
		return classOther, "", w
	}
	if i := strings.IndexByte(w, '('); i > 0 {
		w = w[:i]
	}
	switch {
	case strings.HasPrefix(w, "--"):
		if name, ok := flagName(w); ok {
			return classCode, name, w
		}
		return classOther, "", w
	case strings.IndexByte(w, '/') >= 0:
		if isPath(w) {
			return classCode, strings.ToLower(strings.TrimPrefix(w, "./")), w
		}
		return classOther, "", w
	case strings.IndexByte(w, '.') >= 0:
		if isDotted(w) {
			return classCode, strings.ToLower(w), w
		}
		return classOther, "", w
	case strings.IndexByte(w, '_') >= 0:
		if isSnake(w) {
			return classCode, strings.ToLower(w), w
		}
		return classOther, "", w
	case len(w) >= 2 && len(w) <= 3 && 'A' <= w[0] && w[0] <= 'Z' && strings.Trim(w[1:], "+#") == "":
		return classCode, strings.ToLower(w), w // C++, C#, F#
	}
	c, name := classifyWord(w)
	return c, name, w
}

// classifyWord classifies a word of letters, digits, hyphens, apostrophes and "&".
func classifyWord(w string) (class, string) {
	if n := len(w); n >= 3 && w[n-1] == 's' {
		if base := w[:n-1]; isAcronym(base) { // APIs
			return classAcronym, strings.ToLower(base)
		}
	}
	var firstUpper, firstLower, innerUpper, lower, punct bool
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			firstUpper = firstUpper || i == 0
			innerUpper = innerUpper || i > 0
		case unicode.IsLower(r):
			firstLower = firstLower || i == 0
			lower = true
		case unicode.IsDigit(r):
		case r == '-' || r == '\'' || r == '’' || r == '&':
			punct = true
		default:
			return classOther, ""
		}
	}
	name := fold(w)
	switch {
	case !lower:
		switch {
		case isRoman(w):
			return classRoman, name
		case isAcronym(w):
			return classAcronym, name
		case w == "&":
			return classConnector, name
		}
		if prefix, digits, ok := strings.Cut(w, "-"); ok && isAcronym(prefix) && isDigits(digits) {
			return classAcronym, name // COVID-19
		}
		return classOther, ""
	case firstLower:
		if innerUpper && !punct {
			return classCode, name // camelCase
		}
		if connectors[name] {
			return classConnector, name
		}
		return classOther, ""
	case firstUpper:
		if innerUpper && !punct {
			return classMixed, name
		}
		if connectors[name] {
			return classConnector, name
		}
		if stopWords[name] {
			return classOther, ""
		}
		return classCapital, name
	}
	return classOther, ""
}

// isLowerWord reports whether w is an ASCII lower-case letter followed by more of them, hyphens
// and apostrophes.
func isLowerWord(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || c == '-' || c == '\'') {
			return false
		}
	}
	return true
}

// fold lower-cases a word and straightens its apostrophes, so "O’Brien" and "O'Brien" are one.
func fold(w string) string {
	w = strings.ToLower(w)
	if strings.Contains(w, "’") {
		w = strings.ReplaceAll(w, "’", "'")
	}
	return w
}

// isAcronym reports whether w is 2 to 6 ASCII capitals, digits or "&", starts with a capital,
// does not end with "&", and is not a common word in capitals ("OR", "TODO").
func isAcronym(w string) bool {
	if len(w) < 2 || len(w) > 6 || w[0] < 'A' || w[0] > 'Z' || w[len(w)-1] == '&' {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '&') {
			return false
		}
	}
	return !capsWords[w]
}

// isRoman reports whether w is a Roman numeral of 2 to 4 of I, V and X: the ones that follow
// names ("World War II", "Henry VIII"). Single letters and longer numerals are too ambiguous.
func isRoman(w string) bool {
	return len(w) >= 2 && len(w) <= 4 && strings.Trim(w, "IVX") == ""
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// flagName returns the name of a --flag without its =value.
func flagName(w string) (string, bool) {
	name, _, _ := strings.Cut(w, "=")
	if len(name) < 3 || !isAlnum(name[2]) {
		return "", false
	}
	for i := 3; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '-' && c != '_' {
			return "", false
		}
	}
	return strings.ToLower(name), true
}

// isPath reports whether w looks like a file path rather than a slashed pair of words ("and/or",
// "TCP/IP", "24/7"): it is rooted ("/etc/hosts", "./run.sh", "~/.bashrc"), ends in a file
// extension ("config/app.yaml"), starts with a host ("github.com/ragd/ragd"), or has three or
// more parts ("src/main/java").
func isPath(w string) bool {
	if strings.Contains(w, "//") {
		return false
	}
	letters := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9', c == '.', c == '_', c == '-', c == '/', c == '~', c == '@', c == '+':
		default:
			return false
		}
	}
	if !letters {
		return false
	}
	rel := strings.Trim(w, "/")
	parts := strings.Count(rel, "/") + 1
	first, _, _ := strings.Cut(rel, "/")
	last := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case strings.HasPrefix(w, "./"), strings.HasPrefix(w, "../"), strings.HasPrefix(w, "~/"):
		return true
	case w[0] == '/':
		return parts >= 2 // "/etc/hosts" but not "/month"
	case parts < 2:
		return false
	}
	return hasExtension(last) || hasExtension(first) || parts >= 3
}

// hasExtension reports whether a file or host name ends in a dot and 1 to 10 letters or digits,
// at least one a letter: "app.yaml", ".env", "github.com", but not "v1.2".
func hasExtension(name string) bool {
	i := strings.LastIndexByte(name, '.')
	ext := name[i+1:]
	if i < 0 || len(ext) == 0 || len(ext) > 10 {
		return false
	}
	letter := false
	for j := 0; j < len(ext); j++ {
		c := ext[j]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return letter
}

// isDotted reports whether w is a dotted name like "os.path.join", "fmt.Println" or "app.yaml":
// identifiers joined by dots, at least two of them longer than a letter, which leaves out
// initialisms ("e.g", "U.S") and numbers ("3.14", "v1.2").
func isDotted(w string) bool {
	long := 0
	for part := range strings.SplitSeq(w, ".") {
		if !isIdent(part) {
			return false
		}
		if len(part) > 1 {
			long++
		}
	}
	return long >= 2
}

// isIdent reports whether s is an ASCII identifier.
func isIdent(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// isSnake reports whether w is a snake_case identifier: ASCII letters, digits and underscores
// with an underscore inside ("chunk_seq", "MAX_SIZE", "__init__"), not only at its ends, which
// would be markdown emphasis ("_word_").
func isSnake(w string) bool {
	if !isIdent(w) || len(w) < 3 {
		return false
	}
	letters, _ := letterCase(w)
	return letters && strings.IndexByte(w[1:len(w)-1], '_') >= 0
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
