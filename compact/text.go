package compact

import (
	"regexp"
	"strings"
)

// word is a word of a message: letters, digits, and the marks that hold a word together
// (apostrophes, "&", a colon or dot inside a time, a hyphen inside a word).
var word = regexp.MustCompile(`[\p{L}\p{N}]+(?:['’:.&-][\p{L}\p{N}]+)*|&|n't|'\p{L}+`)

// words returns the lower-cased words of text, in order.
func words(text string) []string {
	return word.FindAllString(strings.ToLower(text), -1)
}

// stopWords are function words, pronouns, auxiliaries and the small talk of a chat: they say
// nothing of what a message is about.
var stopWords = set(`a an the this that these those there here then than so but and or nor if when while where what
	which who whom whose why how as at by for from in into on onto off out over under to up with within without via per
	about above below after before again further once between among through during against of
	i me my mine myself we us our ours you your yours yourself he him his she her it its itself they them their theirs
	is are was were be been being am do does did doing done have has had having can could will would shall should may
	might must 's 're 've 'd 'll 'm n't let's i'm i've i'd i'll we're we've we'd we'll you're it's that's there's
	don't doesn't didn't isn't aren't wasn't weren't won't can't
	all any each few more most other some such only own same too very just also even still yet now really actually
	please thanks thank hello hi hey bye goodbye great good fine nice ok okay sure alright yes yeah well oh perfect
	wonderful awesome lovely excellent cool help helpful welcome sounds sound like need needs want wants wanted looking
	look find get got give tell know think something anything everything nothing else lot much one ones`)

// connectors stand between the words of one name ("bed and breakfast", "museum of the history
// of science"): kept when content words are on both sides.
var connectors = set(`and of the & de du la le von van`)

// negations change what a request means: kept.
var negations = set(`not no n't never without`)

func isNegation(w string) bool { return negations[w] || strings.HasSuffix(w, "n't") }

// compress returns text without its function words and small talk, keeping content words in
// their order, negations, and connectors inside a run of content words: "I need to book a hotel
// in the east that has 4 stars ." becomes "book hotel east 4 stars". It returns "" for a
// message of small talk only ("Thank you , goodbye !").
func compress(text string) string {
	ws := words(text)
	keep := make([]bool, len(ws))
	content := false
	for i, w := range ws {
		switch {
		case isNegation(w):
			keep[i] = true
		case !stopWords[w]:
			keep[i], content = true, true
		}
	}
	if !content {
		return ""
	}
	// A run of at most two connectors between two kept content words stays.
	for i := 0; i < len(ws); i++ {
		if keep[i] || !connectors[ws[i]] || i == 0 || !keep[i-1] || isNegation(ws[i-1]) {
			continue
		}
		j := i
		for j < len(ws) && j-i < 2 && connectors[ws[j]] {
			j++
		}
		if j < len(ws) && keep[j] && !isNegation(ws[j]) {
			for k := i; k < j; k++ {
				keep[k] = true
			}
		}
	}
	var out []string
	for i, w := range ws {
		if keep[i] {
			if strings.HasSuffix(w, "n't") {
				w = "not"
			}
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// novel returns the content words of text that are not in seen and are not values (numbers,
// times, days): the words by which a message names something new.
func novel(text string, seen map[string]bool) []string {
	var out []string
	for _, w := range words(text) {
		if stopWords[w] || negations[w] || connectors[w] || seen[w] || len([]rune(w)) < 3 || isValueWord(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// isValueWord reports whether w is a value rather than a subject: a number, a time, a day.
func isValueWord(w string) bool {
	if strings.IndexFunc(w, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 {
		return true
	}
	return weekday.MatchString(w) || numberWords[w]
}

var numberWords = set(`one two three four five six seven eight nine ten eleven twelve twenty thirty`)
