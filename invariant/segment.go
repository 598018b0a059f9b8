package invariant

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/classify"
)

// segment is a piece of a message: a clause, or the sentence it belongs to. Start and End are
// byte offsets into the message.
type segment struct {
	Start, End int
}

// clause is the unit the detector labels: a clause with the sentence and line around it, because
// some cues live next to the clause they decide ("Nope, the cron runs at 02:00, not UTC": the
// "Nope" makes the rest a correction).
type clause struct {
	segment
	Sentence segment
	Line     segment // spans never merge across lines: pasted output is one record per line
}

// clauses cuts a message into clauses, in message order. Lines are cut first, since pasted
// output is one record per line; then sentences; then clauses at the conjunctions that join two
// independent requirements ("the image must stay under 500MB, and never use :latest").
// A plain comma does not cut: "it's the EU cluster, not US" and "never log the token, not even
// at debug level" are single clauses whose second half qualifies the first.
func clauses(msg string) []clause {
	var out []clause
	for start := 0; start <= len(msg); {
		end := strings.IndexByte(msg[start:], '\n')
		if end < 0 {
			end = len(msg)
		} else {
			end += start
		}
		for _, sent := range sentences(msg, start, end) {
			for _, c := range splitClauses(msg, sent) {
				out = append(out, clause{segment: c, Sentence: sent, Line: segment{start, end}})
			}
		}
		start = end + 1
	}
	return out
}

// sentences cuts msg[start:end] (one line) into trimmed sentences. A sentence ends at . ! or ?
// followed by white space, at "; ", and at a dash between spaces. Cuts never fall inside `code`
// or "double quotes", so a pasted error message with full stops stays whole.
func sentences(msg string, start, end int) []segment {
	var out []segment
	from := start
	cut := func(to, next int) {
		if s, ok := trim(msg, from, to); ok {
			out = append(out, s)
		}
		from = next
	}
	quoted := quoteMask(msg[start:end])
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(msg[i:])
		if quoted[i-start] {
			i += size
			continue
		}
		switch {
		case r == '.' || r == '!' || r == '?':
			// "npm ERR! code ERESOLVE" is one record, not two sentences.
			if r == '!' && shouted(msg[from:i]) {
				i += size
				continue
			}
			j := i
			for j < end && strings.ContainsRune(".!?", rune(msg[j])) {
				j++
			}
			if (j == end || msg[j] == ' ' || msg[j] == '\t') && !abbreviation(msg[from:i]) {
				cut(j, j)
			}
			i = j
		case r == ';' && i+1 < end && msg[i+1] == ' ':
			cut(i, i+1)
			i++
		case (r == '—' || r == '–') && i > start && msg[i-1] == ' ':
			cut(i, i+size)
			i += size
		case r == '-' && strings.HasPrefix(msg[i:end], "-- ") && i > start && msg[i-1] == ' ':
			cut(i, i+2)
			i += 2
		default:
			i += size
		}
	}
	cut(end, end)
	return out
}

// quoteMask marks the bytes of s that are inside `backticks` or "double quotes". An unbalanced
// quote mark opens nothing: it is more often a stray character than a quote that runs on.
func quoteMask(s string) []bool {
	mask := make([]bool, len(s))
	for _, q := range []byte{'`', '"'} {
		if strings.Count(s, string(q))%2 != 0 {
			continue
		}
		in := false
		for i := 0; i < len(s); i++ {
			if s[i] == q {
				in = !in
				continue
			}
			if in {
				mask[i] = true
			}
		}
	}
	return mask
}

// shouted reports whether text ends in a word of two or more capital letters.
func shouted(text string) bool {
	i := strings.LastIndexFunc(text, func(r rune) bool { return !unicode.IsUpper(r) })
	return len(text)-(i+1) >= 2
}

// abbreviation reports whether a full stop after text ends an abbreviation rather than a
// sentence: a single letter ("c. tschudii") or a common short form ("e.g.", "vs.").
func abbreviation(text string) bool {
	i := strings.LastIndexFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '.' })
	word := strings.ToLower(text[i+1:])
	if utf8.RuneCountInString(word) == 1 {
		return true
	}
	switch word {
	case "e.g", "i.e", "etc", "vs", "approx", "cf", "mr", "mrs", "dr", "st":
		return true
	}
	return false
}

// clauseBreak finds where a sentence divides into two clauses: a comma before the phrases that
// open a constraint of their own ("…, no later than 09:45"; first, so that ", as long as" is not
// read as ", as"), a conjunction after a comma, a bare "but", or "and" followed by a word that
// starts a new clause. The one group that matched is the separator.
var clauseBreak = classify.MustPattern(`(?i)(\s*,\s*)(?:no later than|no earlier than|no more than|as long as|so long as|at least|at most|never|always|only if|unless)\b` +
	`|(\s*,\s*(?:and|but|so|because|since|otherwise|which|though|while|as)\s+|\s+but\s+)\S` +
	`|(\s+and\s+)(?:i|we|it|they|you|the|this|that|there|nothing|nobody|no|never|always|please|also|then|don't|do not)\b`)

// splitClauses cuts one sentence at clauseBreak.
func splitClauses(msg string, sent segment) []segment {
	var out []segment
	from := sent.Start
	text := msg[sent.Start:sent.End]
	quoted := quoteMask(text)
	for _, m := range clauseBreak.FindAllStringSubmatchIndex(text, -1) {
		var sepStart, sepEnd int
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 {
				sepStart, sepEnd = m[g], m[g+1]
				break
			}
		}
		if quoted[sepStart] {
			continue
		}
		if s, ok := trim(msg, from, sent.Start+sepStart); ok {
			out = append(out, s)
		}
		from = sent.Start + sepEnd
	}
	if s, ok := trim(msg, from, sent.End); ok {
		out = append(out, s)
	}
	return out
}

// leadingConjunction is a conjunction that opens a clause after a cut ("… tests. and it must
// run against the test DB only"): it joins, it does not belong to either side.
var leadingConjunction = regexp.MustCompile(`^(?i:and|but|so|also|then)\s+`)

// trim narrows msg[start:end] to its content: no surrounding white space, no leading
// conjunction, no comma, colon or dash at either end, and no full stop standing alone after a
// space (the tokenised "centre of town ."; a lone "?" stays, since it makes a question). It
// reports false when nothing with a letter or digit is left.
func trim(msg string, start, end int) (segment, bool) {
	for {
		s := msg[start:end]
		switch {
		case s == "":
			return segment{}, false
		case strings.IndexFunc(s, isSpace) == 0 || strings.IndexAny(s, ",;:") == 0:
			_, size := utf8.DecodeRuneInString(s)
			start += size
		case leadingConjunction.MatchString(s) && !strings.HasPrefix(strings.ToLower(s), "so long as"):
			start += len(leadingConjunction.FindString(s))
		case strings.HasSuffix(s, " ."):
			end -= 2
		default:
			r, size := utf8.DecodeLastRuneInString(s)
			if !isSpace(r) && !strings.ContainsRune(",:;—–-", r) {
				if strings.IndexFunc(s, isWordRune) < 0 {
					return segment{}, false
				}
				return segment{start, end}, true
			}
			end -= size
		}
	}
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
