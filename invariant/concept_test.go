package invariant

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConceptIndexMatchesRegexp checks the word index against the regular expressions the
// concept lists are written as (`\b(?:list)\b`): the same answer for every clause and sentence of
// the labelled messages, and for hand-written edges of word boundaries, stems and phrases.
func TestConceptIndexMatchesRegexp(t *testing.T) {
	t.Parallel()
	res := make([]*regexp.Regexp, len(concepts))
	for i, c := range concepts {
		res[i] = regexp.MustCompile(`\b(?:` + c.list + `)\b`)
	}
	want := func(s string) uint64 {
		var m uint64
		for i, re := range res {
			if re.MatchString(s) {
				m |= 1 << i
			}
		}
		return m
	}
	texts := []string{
		"", "a", "injur", "injury", "uninjured", "injured.", "xinjury", "the e-stop", "e-stops",
		"under 18", "under 19", "under 180", "under 1", "app.env", ".env", "the .env file", "x.envy",
		"sells the data", "selling data", "sell data.", "seller the data", "data center", "datacentre",
		"data  center", "tree nuts", "nuts", "treenuts", "shut-off", "shutoff", "shut off", "log in", "login", "logins!",
		"leave the", "leaves our", "stays within", "stay in", "pins", "keys", "keystore", "key",
		"caffé allergy", "naïve driver", "x_harm", "harm_x", "9harm", "self-harm", "brute force", "brute-forced",
	}
	d := data(t)
	for _, ex := range append(append([]Example(nil), d.Rows...), d.Extra...) {
		m := newMessage(ex.Text, 0)
		texts = append(texts, normalise(ex.Text))
		for _, c := range clauses(ex.Text) {
			v := newView(ex.Text, c, m)
			texts = append(texts, v.texts[text], v.texts[sentence])
		}
	}
	named := 0
	for _, s := range texts {
		w := want(s)
		require.Equal(t, w, conceptIndex.find(s), "concepts of %q", s)
		if w != 0 {
			named++
		}
	}
	require.Greater(t, named, len(texts)/10, "the texts name concepts, so the test compares something")
}

// TestOccasionIsNoRule checks that a clause telling when an event happens may be no rule, while
// one that demands it may (occasion).
func TestOccasionIsNoRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		clause string
		rule   bool
	}{
		{"it only happens when the cache is cold", false},
		{"this never occurs on staging", false},
		{"the warning only shows up for admins", false},
		{"it only reproduces with two tabs open", false},
		{"make sure this never happens again", true},
		{"the reminder must only pop up once a day", true},
		{"only admins can delete projects", true},
	} {
		v := newView(tc.clause, clause{segment: segment{0, len(tc.clause)}, Sentence: segment{0, len(tc.clause)},
			Line: segment{0, len(tc.clause)}}, newMessage(tc.clause, 0))
		ok, cued := candidates(v)
		if !cued {
			ok = open(v)
		}
		require.Equal(t, tc.rule, ok[safety] || ok[constraint], "rule types allowed for %q", tc.clause)
	}
}
