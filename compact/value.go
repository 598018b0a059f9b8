package compact

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ragd/ragd/kg"
)

// Value is one value a message states: a name, a time, a day or date, a count, a place or a
// reference. Key says what it is, in general terms (see Values); Text is the value as written.
type Value struct {
	Key  string
	Text string
}

// Value keys that are not taken from the text itself. Counts are keyed by the noun they count
// ("people", "nights"), times by the verb they go with ("leave", "arrive") when there is one.
const (
	KeyName   = "name"
	KeyTime   = "time"
	KeyDay    = "day"
	KeyDate   = "date"
	KeyFrom   = "from"
	KeyTo     = "to"
	KeyIn     = "in"
	KeyRef    = "ref"
	KeyFor    = "for"
	KeyStatus = "status"
)

var (
	clockTime = regexp.MustCompile(`(?i)\b(?:(?:[01]?\d|2[0-3])[:.][0-5]\d(?:\s?[ap]\.?m\.?)?|(?:1[0-2]|0?[1-9])\s?[ap]\.?m\.?|noon|midnight)(?:\W|$)`)
	// timePrep is the preposition before a time, and timeVerb the verb a time goes with, looked
	// for in the few words before it.
	timePrep = regexp.MustCompile(`(?i)\b(after|before|by|at|around|about|from|until)\s*$`)
	timeVerb = regexp.MustCompile(`(?i)\b(?:(leav|depart|pick)|(arriv|get there|get in|be there|reach))`)
	weekday  = regexp.MustCompile(`(?i)\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tonight|tomorrow)s?\b`)
	month    = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`
	date     = regexp.MustCompile(`(?i)\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)?(?: of)? ` + month + `\b|` + month + ` \d{1,2}(?:st|nd|rd|th)?\b)`)
	// count is a number and the noun it counts: "3 people", "two nights", "4 stars".
	count = regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?:-|\s+)(?:more\s+|extra\s+|different\s+)?([a-z]{3,})\b`)
	// forCount is a bare count after "for": "a table for 4".
	forCount = regexp.MustCompile(`(?i)\bfor (\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b(?:\s*(?:[.,?!]|$|at\b|on\b|in\b|and\b))`)
	// fromTo is a route: "from X to Y". X and Y end at punctuation or at a word that starts a
	// new part of the sentence.
	fromTo = regexp.MustCompile(`(?i)\bfrom ((?:the )?[a-z0-9'&][a-z0-9'& ]*?) (?:to|into|towards) ((?:the )?[a-z0-9'&][a-z0-9'& ]*?)(?:\s*[.,?!;]|\s+(?:on|at|by|after|before|leaving|arriving|and|please|i|that|which|for|in)\b|$)`)
	// toPlace is a destination: "going to X", "a taxi to X".
	toPlace = regexp.MustCompile(`(?i)\b(?:go(?:ing)?|head(?:ing|ed)?|travel(?:l?ing)?|get|taxi|train|ride|bus|trip|driven|take me) to ((?:the )?[a-z0-9'&][a-z0-9'& ]*?)(?:\s*[.,?!;]|\s+(?:on|at|by|after|before|leaving|arriving|and|please|from|i|for|in)\b|$)`)
	// fromPlace is an origin without a destination: "leaving from X", "departing X".
	fromPlace = regexp.MustCompile(`(?i)\b(?:leav\w*|depart\w*|pick\w* (?:me )?up|com\w*) (?:from )?((?:the )?[a-z0-9'&][a-z0-9'& ]*?)(?:\s*[.,?!;]|\s+(?:on|at|by|after|before|to|and|please|i|for|going|arriving)\b|$)`)
	// inPlace is where: "in the east", "in the centre of town".
	inPlace = regexp.MustCompile(`(?i)\bin the ([a-z]+)(?: (?:part|area|side|end)(?: of (?:town|the city))?| of (?:town|the city))?\b`)
	// called is a name introduced as one, in any case: "a place called clare college".
	called = regexp.MustCompile(`(?i)\b(?:called|named|the name of|name is) ((?:the )?[a-z0-9'&][a-z0-9'& ]*?)(?:\s*[.,?!;]|\s+(?:in|on|for|please|that|which|is|it|can|could|do|does|and (?:i|the|can|could|what|how|where|get|give|tell))\b|$)`)
	// reference is a booking or confirmation code.
	reference = regexp.MustCompile(`(?i)\b(?:reference|ref|confirmation|booking)(?: (?:number|code|no|#))*(?: (?:is|will be|:))?\s*:?\s*#?\s*([A-Z0-9]*\d[A-Z0-9]*)\b`)
	// achieved and failed say what became of a request.
	achieved = regexp.MustCompile(`(?i)\b(?:booked|reserved|booking (?:was|is|has been) (?:successful|complete|made|confirmed)|(?:successfully|have) (?:booked|reserved|made)|confirmed|all set)\b`)
	failed   = regexp.MustCompile(`(?i)\b(?:unsuccessful|fully booked|(?:not|n't|no longer) (?:be )?(?:available|possible|able to book)|unable to (?:book|reserve)|no (?:availability|rooms|tables|seats)|(?:couldn't|could n't|can't|ca n't|cannot) (?:book|reserve))\b`)
)

// notCounted are nouns that follow a number without being what is counted, and notPlace words
// that follow "in the" without being a place.
var (
	notCounted = set(`am pm and or to of the for minutes minute hours hour min mins pounds pound gbp usd dollars euros percent
		star-rating people's`)
	notPlace = set(`same mood morning afternoon evening night meantime mean future past way area city town middle process day week
		list system future other first last next`)
)

// Values returns the values text states, in the order they appear. They are found by their
// shape, for any domain: clock times (keyed by the verb they go with: leave, arrive, else
// time), days and dates, counts (keyed by the counted noun: "3 people" is people=3), routes
// (from, to), places (in), names (capitalized phrases, or any phrase introduced by "called"),
// reference codes, and whether a request was achieved (status=booked) or failed
// (status=failed).
func Values(text string) []Value {
	type at struct {
		pos int
		v   Value
	}
	var found []at
	add := func(pos int, key, val string) {
		val = strings.Join(strings.Fields(strings.Trim(val, " .,;:!?")), " ")
		if val != "" {
			found = append(found, at{pos, Value{Key: key, Text: val}})
		}
	}
	for _, m := range clockTime.FindAllStringIndex(text, -1) {
		t := strings.TrimRight(text[m[0]:m[1]], " .,;:!?)")
		key, prep := KeyTime, ""
		before := lastWords(text[:m[0]], 5)
		if p := timePrep.FindStringSubmatch(before); p != nil {
			prep = strings.ToLower(p[1])
		}
		if vs := timeVerb.FindAllStringSubmatch(before, -1); vs != nil {
			key = "arrive"
			if vs[len(vs)-1][1] != "" {
				key = "leave"
			}
		}
		if prep == "after" || prep == "before" || prep == "by" {
			t = prep + " " + t
		}
		add(m[0], key, t)
	}
	for _, m := range weekday.FindAllStringSubmatchIndex(text, -1) {
		add(m[0], KeyDay, strings.ToLower(text[m[2]:m[3]]))
	}
	for _, m := range date.FindAllStringIndex(text, -1) {
		add(m[0], KeyDate, text[m[0]:m[1]])
	}
	for _, m := range count.FindAllStringSubmatchIndex(text, -1) {
		noun := strings.ToLower(text[m[4]:m[5]])
		// Not the minutes of a time or the decimals of a price, not a street number
		// ("74 Mill Road", "151 hills road"), not a day.
		if m[0] > 0 && strings.ContainsRune(":.,0123456789", rune(text[m[0]-1])) || notCounted[noun] || stopWords[noun] ||
			isUpper(text[m[4]]) || street.MatchString(text[m[5]:]) || weekday.MatchString(noun) || resultCount.MatchString(text[:m[0]]) {
			continue
		}
		add(m[0], noun, text[m[2]:m[3]])
	}
	for _, m := range forCount.FindAllStringSubmatchIndex(text, -1) {
		add(m[0], KeyFor, text[m[2]:m[3]])
	}
	routes := fromTo.FindAllStringSubmatchIndex(text, -1)
	for _, m := range routes {
		add(m[2], KeyFrom, trimArticle(text[m[2]:m[3]]))
		add(m[4], KeyTo, trimArticle(text[m[4]:m[5]]))
	}
	inRoute := func(pos int) bool {
		return slices.ContainsFunc(routes, func(r []int) bool { return pos >= r[0] && pos < r[1] })
	}
	for _, m := range toPlace.FindAllStringSubmatchIndex(text, -1) {
		if !inRoute(m[2]) {
			add(m[2], KeyTo, trimArticle(text[m[2]:m[3]]))
		}
	}
	for _, m := range fromPlace.FindAllStringSubmatchIndex(text, -1) {
		if p := trimArticle(text[m[2]:m[3]]); !inRoute(m[2]) && !clockTime.MatchString(p) && !weekday.MatchString(p) && !stopWords[strings.ToLower(p)] {
			add(m[2], KeyFrom, p)
		}
	}
	for _, m := range inPlace.FindAllStringSubmatchIndex(text, -1) {
		if w := strings.ToLower(text[m[2]:m[3]]); !notPlace[w] && !stopWords[w] {
			add(m[2], KeyIn, w)
		}
	}
	for _, m := range called.FindAllStringSubmatchIndex(text, -1) {
		add(m[2], KeyName, trimArticle(text[m[2]:m[3]]))
	}
	for _, n := range names(text) {
		add(n.pos, KeyName, n.text)
	}
	for _, m := range reference.FindAllStringSubmatchIndex(text, -1) {
		if code := text[m[2]:m[3]]; len(code) >= 5 {
			add(m[2], KeyRef, code)
		}
	}
	switch {
	case failed.MatchString(text):
		add(len(text), KeyStatus, "failed")
	case achieved.MatchString(text):
		add(len(text), KeyStatus, "booked")
	}
	slices.SortStableFunc(found, func(a, b at) int { return a.pos - b.pos })
	out := make([]Value, 0, len(found))
	for _, f := range found {
		if !slices.Contains(out, f.v) {
			out = append(out, f.v)
		}
	}
	return out
}

type name struct {
	pos  int
	text string
}

// names returns the proper names of text (kg.Extract's proper-noun phrases, without days and
// dates), with two names joined by "and" taken as one: kg reads "Frankie and Bennys" as two
// names, but as a value it is one, and keeping both words together loses nothing.
func names(text string) []name {
	var out []name
	from := 0
	for _, e := range kg.Extract(text, nil) {
		if e.Kind != kg.Proper || weekday.MatchString(e.Surface) || date.MatchString(e.Surface) {
			continue
		}
		i := strings.Index(text[from:], e.Surface)
		if i < 0 {
			continue
		}
		pos := from + i
		from = pos + len(e.Surface)
		if n := len(out); n > 0 {
			prev := &out[n-1]
			if gap := text[prev.pos+len(prev.text) : pos]; andJoin.MatchString(gap) {
				prev.text = text[prev.pos:from]
				continue
			}
		}
		out = append(out, name{pos: pos, text: e.Surface})
	}
	return out
}

var andJoin = regexp.MustCompile(`^(?:\s+(?:and|&)\s+|\s*&\s*)$`)

// resultCount ends the words before a count of results rather than of what the user wants: "there
// are 4 hotels", "I found 12 trains".
var resultCount = regexp.MustCompile(`(?i)\b(?:there (?:are|is|were)|i (?:have|found|see|show|got|'ve got)|we (?:have|found)|found|returned|shows?|about|over|around|at least|only)\s*$`)

// street finds the end of a street address after a number and a word: "74 mill road".
var street = regexp.MustCompile(`(?i)^\s+(?:\w+\s+)?(?:road|street|lane|avenue|way|drive|close|place|square|hill|row|court|park)\b`)

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// lastWords returns the end of s that holds its last n words.
func lastWords(s string, n int) string {
	fields := strings.Fields(s)
	return strings.Join(fields[max(len(fields)-n, 0):], " ") + " "
}

// trimArticle drops a leading "the " and surrounding space.
func trimArticle(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 4 && strings.EqualFold(s[:4], "the ") {
		return s[4:]
	}
	return s
}

// set builds a lookup table from space-separated words.
func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
