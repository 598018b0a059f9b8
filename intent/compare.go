package intent

import (
	"regexp"
	"strings"
)

// comparePatterns find the compared entities of a turn. Each captures the raw entity text in
// its groups; a pattern whose first group holds a list ("between A, B and C") is split by
// splitList. They are tried in order and the first that yields two entities wins, so the
// specific shapes come before the loose ones.
var comparePatterns = []struct {
	re   *regexp.Regexp
	list bool // the first group is a list of entities
}{
	// "difference between X and Y", "differences among A, B, and C"
	{re: regexp.MustCompile(`(?i)\bdiff[a-z]*\s+(?:(?:are|is)\s+)?(?:between|among|amongst)\s+(.+)`), list: true},
	// "Are X and Y the same (thing)?"
	{re: regexp.MustCompile(`(?i)\b(?:is|are)\s+(.+?)\s+and\s+(.+?)\s+(?:the same|different|similar|alike)\b`)},
	// "is X the same as Y", "X is different from Y", "is X similar to Y"
	{re: regexp.MustCompile(`(?i)^(.+?)\s+(?:(?:is|are)\s+)?(?:the same (?:thing )?as|same as|different (?:from|than|to)|similar to|differ(?:s)? from)\s+(.+)`)},
	// "X vs Y", "X versus Y"
	{re: regexp.MustCompile(`(?i)^(.+?)\s+(?:vs\.?|versus)\s+(.+)`)},
	// "which is cheaper, X or Y", "which one: X or Y"
	{re: regexp.MustCompile(`(?i)\bwhich\b[^,:]*[,:]\s*(.+?)\s+or\s+(.+)`)},
	// "X or Y, which …", "X or Y — which …"
	{re: regexp.MustCompile(`(?i)^([^.?!]+?)\s+or\s+([^.?!,]+?)\s*(?:,|—|–|-|;)\s*which\b`)},
	// "go with X or Y", "choose between X or Y"
	{re: regexp.MustCompile(`(?i)\b(?:go with|choose|pick|use)\s+([^\s?.,]+(?:\s+[^\s?.,]+){0,2})\s+or\s+([^\s?.,]+(?:\s+[^\s?.,]+){0,2})`)},
	// "is latency lower in X or Y", "which is cheaper at X or Y"
	{re: regexp.MustCompile(`(?i)\b(?:better|worse|cheaper|faster|slower|safer|bigger|smaller|larger|higher|lower|easier|harder|(?:more|less)\s+\w+)\s+(?:in|at|on|for|with)\s+([^\s?,]+(?:\s+[^\s?,]+)?)\s+or\s+([^\s?,]+(?:\s+[^\s?,]+)?)`)},
	// "is X better than Y", "are X less nutritious than Y" (or the frequent typo "then")
	{re: regexp.MustCompile(`(?i)^(.+?)\s+(?:(?:better|worse|cheaper|faster|slower|safer|older|younger|newer|bigger|smaller|larger|higher|lower|easier|harder|stronger|weaker)|(?:more|less)\s+\w+)\s+th[ae]n\s+(.+)`)},
	// "how does tea differ in X compared to Y", then "X compared to Y"
	{re: regexp.MustCompile(`(?i)\b(?:in|at|on|for|with)\s+(.+?)\s+(?:compared (?:to|with)|in comparison (?:to|with))\s+(.+)`)},
	{re: regexp.MustCompile(`(?i)^(.+?)\s+(?:compared (?:to|with)|in comparison (?:to|with))\s+(.+)`)},
	// "X or Y for this?", "Postgres or Mongo?": a bare choice, short sides only.
	{re: regexp.MustCompile(`(?i)^([^\s,?]+(?:\s+[^\s,?]+){0,2})\s+or\s+([^\s,?]+(?:\s+[^\s,?]+){0,2})(?:\s+(?:for|in|on)\b[^?]*)?\s*\?`)},
}

// leadIn is a question opener or filler before the first entity: "is", "what are", "so is it",
// "teach me", "should I use".
var leadIn = regexp.MustCompile(`(?i)^(?:(?:so|and|but|ok|okay|hmm|now|then|also|well)[,]?\s+)*(?:(?:can you|could you|please)\s+)?(?:tell me|teach me|explain|compare|describe|show me|what(?:'s| is| are)?(?: the)?(?: main| key| real)?|how (?:is|are|does|do)|is|are|does|do|would|should (?:i|we)(?: use| go with| pick| choose)?|i (?:don't|do not) know if i (?:go|should go) with|don't know if i go with)\s+`)

// entityTail cuts an entity at the first clause boundary or trailing qualifier.
var entityTail = regexp.MustCompile(`(?i)(?:\s*[?!;:—–]|\s+-\s|,|\.\.\.|\.\s|\.$|\s+(?:for|in|when|which|what|that|on|at|with|if|because|since|to do|to use|in practice|the same)\b)`)

// pronouns cannot stand for an entity the pipeline can retrieve for.
var pronouns = map[string]bool{
	"it": true, "this": true, "that": true, "they": true, "them": true, "these": true, "those": true,
	"one": true, "the one": true, "the other": true, "other": true, "either": true, "both": true,
	"the old one": true, "the new one": true, "which": true, "which one": true, "what": true,
	"there": true, "here": true, "others": true, "the others": true, "all": true,
}

// oneSide patterns find a single named entity in a comparison whose other side is implied:
// "and Paxos? how are they different", "is GitLab CI much different?", "is it the same as
// data backup?".
var oneSide = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^(?:and|what about|how about)\s+([^?]+)\?`),
	regexp.MustCompile(`(?i)^(?:is|are|does|do|how (?:does|do|is|are))\s+(.+?)\s+(?:(?:much|very|any|really|so)\s+)?(?:differ|different|better|worse|the same|similar)\b`),
	regexp.MustCompile(`(?i)\b(?:the same as|different from|difference with|compared to|better than|worse than)\s+(.+)`),
}

// topicPattern finds what a question is about: "What is Raft?", "explain the GDPR data
// subject rights", "how do I write a GitHub Actions workflow?".
var topicPattern = regexp.MustCompile(`(?i)^(?:(?:so|and|ok|okay),?\s+)?(?:what(?:'s| is| are| was| were)|who (?:is|was)|explain|tell me about|describe|how do i \w+|how (?:does|do|is|are))\s+(.+?)(?:\s+(?:work|used for|mean))?\s*[?.!]*$`)

// CompareEntities returns the compared entities of a compare turn ("X vs Y", "difference
// between X and Y", "is X the same as Y", "which is cheaper, X or Y", "is X better than Y"),
// or nil when it cannot find two. The pipeline retrieves for each entity and merges.
//
// A comparative turn that names fewer than two takes the rest from the history: with one
// entity ("is GitLab CI much different?"), the other is the subject of the latest history turn
// ("how do I write a GitHub Actions workflow?"); with none ("Which one is cheaper?"), the
// entities of the latest history turn that names two.
func CompareEntities(text string, history []string) []string {
	if ents := entitiesIn(text); ents != nil {
		return ents
	}
	if !compareCue.MatchString(normalize(text)) && !orChoiceCue.MatchString(normalize(text)) {
		return nil
	}
	h := lastTurns(history, historyTurns)
	if one := entityIn(text); one != "" {
		if len(h) == 0 {
			return nil
		}
		if m := topicPattern.FindStringSubmatch(strings.TrimSpace(h[len(h)-1])); m != nil {
			if topic := cleanEntity(m[1]); topic != "" && !strings.EqualFold(topic, one) {
				return []string{topic, one}
			}
		}
		return nil
	}
	for i := len(h) - 1; i >= 0; i-- {
		if ents := entitiesIn(h[i]); ents != nil {
			return ents
		}
	}
	return nil
}

// entityIn returns the one entity a comparison names, or "".
func entityIn(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	for _, re := range oneSide {
		if m := re.FindStringSubmatch(text); m != nil {
			if e := cleanEntity(m[1]); e != "" {
				return e
			}
		}
	}
	return ""
}

// entitiesIn returns the entities one text compares, or nil.
func entitiesIn(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	for _, p := range comparePatterns {
		m := p.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		var raw []string
		if p.list {
			raw = splitList(cutTail(m[1]))
		} else {
			raw = []string{lastClause(m[1]), m[2]}
		}
		var ents []string
		for _, r := range raw {
			if e := cleanEntity(r); e != "" {
				ents = append(ents, e)
			}
		}
		if len(ents) >= 2 && !sameFold(ents) {
			return completeHeads(ents, p.list)
		}
	}
	return nil
}

// lastClause keeps the part of a left-hand side after its last clause break, so that
// "tell me about the Pro plan: Pro" gives "Pro".
func lastClause(s string) string {
	if i := strings.LastIndexAny(s, ",:;—–?!"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// cutTail cuts a list at its end ("A, B and C for small teams?" gives "A, B and C").
func cutTail(s string) string {
	if i := strings.IndexAny(s, "?!;:—–"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// listSep separates the items of "A, B, and C", "A and B" or "A or B".
var listSep = regexp.MustCompile(`(?i),?\s+(?:and|or|&)\s+`)

// splitList splits a list of entities.
func splitList(s string) []string {
	return strings.Split(listSep.ReplaceAllString(s, ","), ",")
}

// cleanEntity trims an entity to its noun phrase: no question opener, no trailing clause, no
// leading article or quotes. It returns "" for a pronoun or for something too long to be a
// name.
func cleanEntity(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := leadIn.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	if loc := entityTail.FindStringIndex(s); loc != nil && loc[0] > 0 {
		s = s[:loc[0]]
	}
	s = strings.Trim(s, " \t\"'`“”‘’.,?!()")
	for _, article := range []string{"the ", "a ", "an ", "The ", "A ", "An "} {
		s = strings.TrimPrefix(s, article)
	}
	s = strings.TrimSpace(s)
	if s == "" || pronouns[strings.ToLower(s)] || len(strings.Fields(s)) > 8 {
		return ""
	}
	return s
}

// sameFold reports whether all entities are the same string, ignoring case: "X vs X" is not a
// comparison the pipeline can split.
func sameFold(ents []string) bool {
	for _, e := range ents[1:] {
		if !strings.EqualFold(e, ents[0]) {
			return false
		}
	}
	return true
}

// completeHeads restores words that entities share: "15- or 30-year mortgage" gives
// "15-year mortgage" and "30-year mortgage", and in a list, "the sync and async clients" gives
// "sync clients" and "async clients". A shared head is only added to a lower-case single word,
// so that "Supergirl and Power Girl" stays as it is, and only in a list, so that "refinancing
// vs getting a mortgage" does too.
func completeHeads(ents []string, list bool) []string {
	last := ents[len(ents)-1]
	words := strings.Fields(last)
	for i, e := range ents[:len(ents)-1] {
		switch {
		case strings.HasSuffix(e, "-"):
			if _, rest, ok := strings.Cut(last, "-"); ok {
				ents[i] = e + rest
			}
		case list && len(words) >= 2 && !strings.Contains(e, " ") && e == strings.ToLower(e) &&
			words[0] == strings.ToLower(words[0]):
			ents[i] = e + " " + strings.Join(words[1:], " ")
		}
	}
	return ents
}
