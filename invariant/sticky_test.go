package invariant

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSticky(t *testing.T) {
	t.Parallel()

	// sticky is an expected invariant: type, text and the turn it comes from.
	type sticky struct {
		Type Type
		Text string
		Turn int
	}
	for _, tc := range []struct {
		name string
		msgs []string // user messages; message i is turn i+1 with ID "m<i+1>"
		want []sticky
	}{
		{
			name: "priority order, then latest turn first",
			msgs: []string{
				"the image must stay under 500MB",
				"Never log the access token.",
				"actually it's Python 3.8, not 3.11",
				"the build fails with `KeyError: 'embedding'`",
				"the DB user must be read-only",
			},
			want: []sticky{
				{Safety, "the DB user must be read-only", 5},
				{Safety, "Never log the access token.", 2},
				{Correction, "actually it's Python 3.8, not 3.11", 3},
				{Constraint, "the image must stay under 500MB", 1},
				{Blocking, "`KeyError: 'embedding'`", 4},
			},
		},
		{
			name: "only the latest correction",
			msgs: []string{
				"actually it's Python 3.8, not 3.11",
				"sorry, I meant the staging cluster, not prod",
				"thanks, that helps",
			},
			want: []sticky{{Correction, "I meant the staging cluster, not prod", 2}},
		},
		{
			name: "equal texts once, from the latest turn",
			msgs: []string{
				"the image must stay under 500MB.",
				"Never log the access token.",
				"The image must stay under 500MB",
			},
			want: []sticky{
				{Safety, "Never log the access token.", 2},
				{Constraint, "The image must stay under 500MB", 3},
			},
		},
		{
			name: "a fix without a name resolves the latest error only",
			msgs: []string{
				"the build fails with `KeyError: 'embedding'`",
				"also npm install fails with `npm ERR! ERESOLVE unable to resolve dependency tree`",
				"ok that works now, thanks",
			},
			want: []sticky{{Blocking, "`KeyError: 'embedding'`", 1}},
		},
		{
			name: "a fix that names its error resolves that one",
			msgs: []string{
				"the build fails with `KeyError: 'embedding'`",
				"also npm install fails with `npm ERR! ERESOLVE unable to resolve dependency tree`",
				"the KeyError is fixed now",
			},
			want: []sticky{{Blocking, "`npm ERR! ERESOLVE unable to resolve dependency tree`", 2}},
		},
		{
			name: "resolved",
			msgs: []string{"I cannot get select query to work", "resolved, thanks"},
			want: nil,
		},
		{
			name: "a fix that did not last is no fix",
			msgs: []string{"I cannot get select query to work", "the restart fixed it for a minute, then the same thing again"},
			want: []sticky{{Blocking, "I cannot get select query to work", 1}},
		},
		{
			name: "not fixed is no fix",
			msgs: []string{"I cannot get select query to work", "it's not fixed yet"},
			want: []sticky{{Blocking, "I cannot get select query to work", 1}},
		},
		{
			name: "a question is no fix",
			msgs: []string{"I cannot get select query to work", "is it fixed in 2.1?"},
			want: []sticky{{Blocking, "I cannot get select query to work", 1}},
		},
		{
			name: "a message does not resolve its own error",
			msgs: []string{"the old query works now. but `ERROR: relation \"users\" does not exist`"},
			want: []sticky{{Blocking, "`ERROR: relation \"users\" does not exist`", 1}},
		},
		{
			name: "nothing",
			msgs: []string{"hello", "what is BM25?"},
			want: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs := make([]Message, len(tc.msgs))
			for i, text := range tc.msgs {
				msgs[i] = Message{ID: "m" + string(rune('1'+i)), Turn: i + 1, Text: text}
			}
			var got []sticky
			for _, inv := range Sticky(msgs) {
				require.Equal(t, inv.Type.Priority(), inv.Priority)
				require.Equal(t, "m"+string(rune('0'+inv.Turn)), inv.MessageID)
				got = append(got, sticky{inv.Type, inv.Text, inv.Turn})
			}
			require.Equal(t, tc.want, got)
			// Carried from any earlier turn, the invariants are the same.
			for k := range msgs {
				require.Equal(t, Sticky(msgs), StickyAfter(Sticky(msgs[:k]), msgs[k:]), "after turn %d", k)
			}
		})
	}
}
