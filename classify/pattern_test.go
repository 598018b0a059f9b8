package classify

import (
	"hash/fnv"
	"maps"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// patternCases are patterns of the kinds the cues use: lists of words between word boundaries,
// anchors, classes, repetitions, quotes, case folding and alternatives inside concatenations.
var patternCases = []string{
	`\b(?:must|mustn't)\b`,
	`\bat \S+ \(\S+:\d+`,
	`\b(?:returns?|returned|got|http|status|code|error|answers?)\s+[45]\d\d\b|\([45]\d\d\b`,
	`^(?:please |pls |hey!? |ok,? |now |also |and )?\b(?:write|create|set(?: up)?|summari[sz]e)\b`,
	`[a-z]\w*(?:error|exception)\b|\b(?:error|panic|failed):|\bnpm err!`,
	"`|[{}]|\\(\\)|=>|->|::|--\\w+|\\$ \\w+|(?:^|\\s)(?:\\.{0,2}/)?[\\w.-]+/[\\w./-]+",
	"`[^`]+`|\"[^\"]{6,}\"|(?:^|[\\s(:])'[^']{6,}'",
	`\b(?:i|we|nobody|no one|it|they|users?)\s+(?:can't|cannot|can not|couldn't|could not|am unable|are unable)\b`,
	`\bnot\b[^,.]*,\s*(?:it's|it is|its|i'm|we're|they're)\b|\bnot\s+[^,.]+?\s+but\b|\brather\b|\binstead\b`,
	`(?i)(\s*,\s*)(?:no later than|unless)\b|(\s+and\s+)(?:i|we|never)\b`,
	`^(?:(?:sorry|please|hmm+|ok(?:ay)?|thank you)\b[\s,:.!]*)+`,
	`\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Off|Killed|Failed|Denied)\b|\bERR!|\b[A-Z_]+_(?:FAILED|ERROR)\b`,
	`\?\s*$`,
	`\byesterday(?:$|[^'\w])|\b(?:last (?:week|night)|(?:days?|weeks?) ago)\b`,
	`é+|ſ|\x{FFFD}|[ÄÖÜ]x|\bk\b`,
	`(?i)\bsk(?:y|ies)\b|(?i:ǅ)`,
	`a*|b`,
	`(?:x|y)(?:1|2)(?:p|q)z`,
	`\{\x00\}`, `[{}]`, // needed sets {"{\x00}"} and {"{", "}"}: told apart in a set
}

// patternTexts are texts to match them against: the labelled turns of the mode and invariant
// packages and some made to catch patterns out (case, invalid UTF-8, the long s and Kelvin sign
// that case folding matches).
func patternTexts(t *testing.T) []string {
	texts := []string{
		"", "a", "must", "mustn't", "You mustn't", "at foo (bar.js:12)", "it returned 503 and (404)",
		"please write the summarise job", "hey! set up the cron", "ValueError: bad", "npm err! code",
		"`x`", "say \"hello there\"", "it's 'quoted text'", "we can't log in", "not the cat, it's the dog",
		"wait, no later than 9", "X AND we go", "sorry, please do it", "OOMKilled CrashLoopBackOff AUTH_FAILED",
		"why?", "yesterday's news", "yesterday.", "two days ago", "éé ſ \xff K", "xyz x1pz y2qz", "UNLESS",
		"ſorry", "\xff\xfe", "ÄÖÜx", "ſKIES", "Sky", "ǆ Ǆ ǅ", "{", "{\x00}", strings.Repeat("qwertyuiop", 800),
	}
	for _, file := range []string{"../mode/data/modes_extra.jsonl", "../invariant/data/invariants_extra.jsonl"} {
		rows, err := LoadJSONL[struct{ Text string }](file)
		require.NoError(t, err)
		for _, r := range rows {
			texts = append(texts, r.Text, strings.ToLower(r.Text))
		}
	}
	return texts
}

// A Pattern answers as its regular expression does, alone and through a set.
func TestPatternAnswersAsRegexp(t *testing.T) {
	t.Parallel()
	set := NewPatterns()
	var ps []*Pattern
	for _, expr := range patternCases {
		ps = append(ps, set.Add(MustPattern(expr)))
	}
	for _, text := range patternTexts(t) {
		scanned := set.Scan(text)
		for i, p := range ps {
			re := regexp.MustCompile(patternCases[i])
			want := re.MatchString(text)
			require.Equal(t, want, p.MatchString(text), "%q on %q", patternCases[i], text)
			require.Equal(t, want, scanned.Match(p), "%q on %q, in a set", patternCases[i], text)
			require.Equal(t, re.ReplaceAllString(text, "_"), p.ReplaceAllString(text, "_"), "%q on %q", patternCases[i], text)
			require.Equal(t, re.FindAllStringSubmatchIndex(text, -1), p.FindAllStringSubmatchIndex(text, -1), "%q on %q", patternCases[i], text)
		}
	}
}

func FuzzPattern(f *testing.F) {
	for _, s := range []string{"must", "at x (y:1)", "returned 404", "ſorry, please", "`a`", "not x, it's y"} {
		f.Add(s)
	}
	set := NewPatterns()
	var ps []*Pattern
	for _, expr := range patternCases {
		ps = append(ps, set.Add(MustPattern(expr)))
	}
	f.Fuzz(func(t *testing.T, text string) {
		scanned := set.Scan(text)
		for i, p := range ps {
			want := regexp.MustCompile(patternCases[i]).MatchString(text)
			if p.MatchString(text) != want || scanned.Match(p) != want {
				t.Fatalf("%q on %q: want %v", patternCases[i], text, want)
			}
		}
	})
}

// needed finds what every match holds: the words of a list, the literal runs of a
// concatenation (each needed), nothing under case folding or where a letter is all it knows.
func TestNeeded(t *testing.T) {
	t.Parallel()
	need := func(expr string) [][]string {
		r, err := syntax.Parse(expr, syntax.Perl)
		require.NoError(t, err)
		return needed(r)
	}
	require.Equal(t, [][]string{{"must"}}, need(`\b(?:must|mustn't)\b`))
	require.Equal(t, [][]string{{"at "}, {" ("}, {":"}}, need(`\bat \S+ \(\S+:\d+`))
	require.Equal(t, [][]string{{"exit code", "exit status"}}, need(`\bexit (?:code|status)\b`))
	require.Equal(t, [][]string{{"`"}}, need("`[^`]+`"))
	require.Equal(t, [][]string{{"AN", "An", "aN", "an"}}, need(`(?i)an`))
	require.Len(t, need(`(?i)sorry`)[0], 3*2*2*2*2) // s, S and ſ
	require.Nil(t, need(`(?i)no later than`))       // too many spellings
	require.Nil(t, need(`a*|b`))
	require.Nil(t, need(`\bk\b`))
	require.Len(t, need(`[45]\d\d`)[0], 200)
}

// split cuts a pattern into branches whose matches are its matches.
func TestSplit(t *testing.T) {
	t.Parallel()
	const expr = `\b(?:ab|cd)x(?:ef|gh)\b|f`
	r, err := syntax.Parse(expr, syntax.Perl)
	require.NoError(t, err)
	p := MustPattern(expr)
	var got []string
	for _, b := range split(r) {
		got = append(got, compileBranch(p, b).String())
	}
	require.Equal(t, []string{`\babxef\b`, `\babxgh\b`, `\bcdxef\b`, `\bcdxgh\b`, `f`}, got)
}

// bucket is FNV-1a of the parts with a 0 byte between them, as hash/fnv computes it.
func TestBucket(t *testing.T) {
	t.Parallel()
	h := hasher{mask: 1<<18 - 1}
	for _, parts := range [][]string{{"c", "<th"}, {"", "w", "error"}, {"prev", "b", "<s>", "why"}, {"c", "é€>"}} {
		f := fnv.New32a()
		f.Write([]byte(strings.Join(parts, "\x00")))
		require.Equal(t, f.Sum32()&h.mask, h.bucket(parts...), "%q", parts)
	}
}

// charCounts counts every 3- to 5-gram of each padded word, as a count per gram does.
func TestCharCounts(t *testing.T) {
	t.Parallel()
	h := hasher{mask: 1<<18 - 1}
	for _, text := range patternTexts(t) {
		tokens := Tokenize(text)
		want := map[uint32]float64{}
		for _, tok := range tokens {
			if !isWord(tok) {
				continue
			}
			r := []rune("<" + tok + ">")
			for n := 3; n <= 5; n++ {
				for i := 0; i+n <= len(r); i++ {
					want[h.bucket("c", string(r[i:i+n]))]++
				}
			}
		}
		got := charCounts(h, tokens)
		require.True(t, maps.Equal(want, got), "%q", text)
	}
}
