package invariant

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

func TestPriority(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    Type
		want int
	}{
		{Safety, 1000}, {Correction, 900}, {Constraint, 800}, {Blocking, 700}, {"", 0}, {"other", 0},
	} {
		require.Equal(t, tc.want, tc.t.Priority(), tc.t)
	}
	for i := 1; i < len(Types); i++ {
		require.Greater(t, Types[i-1].Priority(), Types[i].Priority(), "Types is in priority order")
	}
}

// want is one expected span, by type and text.
type want struct {
	Type Type
	Text string
}

func TestDetect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		msg  string
		want []want
	}{
		// The definitions' own examples.
		{"safety over constraint", "Never log the access token, not even at debug level.",
			[]want{{Safety, "Never log the access token, not even at debug level."}}},
		{"soft safety ask", "please make sure passwords get redacted in the debug output",
			[]want{{Safety, "make sure passwords get redacted in the debug output"}}},
		{"data residency", "keep all customer data in the EU", []want{{Safety, "keep all customer data in the EU"}}},
		{"read-only user", "the DB user must be read-only", []want{{Safety, "the DB user must be read-only"}}},
		{"TLS", "don't disable TLS verification", []want{{Safety, "don't disable TLS verification"}}},
		{"kill switch", "the kill switch stays on whatever you change", []want{{Safety, "the kill switch stays on whatever you change"}}},
		// An allergy is itself the requirement the answers respect (labels README §2), so it stays
		// in the span, as in both allergy labels of the training data; other reasons are left out.
		{"allergy", "I'm allergic to shellfish, so no recipes with shrimp",
			[]want{{Safety, "I'm allergic to shellfish, so no recipes with shrimp"}}},
		{"correction no-not", "No, use LDAP, not OAuth", []want{{Correction, "No, use LDAP, not OAuth"}}},
		{"correction actually", "actually it's Python 3.8", []want{{Correction, "actually it's Python 3.8"}}},
		{"correction meant", "oh I meant saturn", []want{{Correction, "oh I meant saturn"}}},
		// A correction names what it corrects, whatever the subject: a hazard or a secret in it is
		// no safety rule (retracts).
		{"correction naming a hazard", "No wait, the drone is a DJI Mini, not a Mavic.",
			[]want{{Correction, "No wait, the drone is a DJI Mini, not a Mavic."}}},
		{"correction naming secrets", "I meant the passwords of the admin accounts only.",
			[]want{{Correction, "I meant the passwords of the admin accounts only."}}},
		{"challenge and its reason", "Are you sure? I think you can get a permit at 15 years old.",
			[]want{{Correction, "Are you sure? I think you can get a permit at 15 years old."}}},
		{"you said", "what? you said it is free to open one!", []want{{Correction, "you said it is free to open one!"}}},
		{"change of request", "Never mind, I don't want a restaurant", []want{{Correction, "Never mind, I don't want a restaurant"}}},
		{"constraint must", "the image must stay under 500MB", []want{{Constraint, "the image must stay under 500MB"}}},
		{"constraint inside a sentence", "I need to arrive much earlier, no later than 09:45.", []want{{Constraint, "no later than 09:45."}}},
		{"constraint don't want", "I don't want a guesthouse", []want{{Constraint, "I don't want a guesthouse"}}},
		{"failure clause", "I cannot get select query to work", []want{{Blocking, "I cannot get select query to work"}}},
		{"key line of a trace", "Traceback (most recent call last):\n  File \"ingest.py\", line 88, in <module>\n    main()\n" +
			"UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 2047",
			[]want{{Blocking, "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 2047"}}},
		{"quoted error over the prose around it", "npm install fails on CI with `npm ERR! ERESOLVE unable to resolve dependency tree`, so I can't merge",
			[]want{{Blocking, "`npm ERR! ERESOLVE unable to resolve dependency tree`"}}},
		{"two types", "cannot build the docker image. the image must stay under 500MB btw",
			[]want{{Blocking, "cannot build the docker image."}, {Constraint, "the image must stay under 500MB btw"}}},

		// Safety is what the rule protects, whatever words say it: people near a machine, access
		// to documents, malware.
		{"physical safety", "The arm may not exceed 0.5 m/s when an operator is within 2 metres.",
			[]want{{Safety, "The arm may not exceed 0.5 m/s when an operator is within 2 metres."}}},
		{"access rule", "Users should only see documents their team has access to.",
			[]want{{Safety, "Users should only see documents their team has access to."}}},
		{"malware", "All attachments must be virus-scanned before they're indexed.",
			[]want{{Safety, "All attachments must be virus-scanned before they're indexed."}}},
		// Safety concepts (concept.go): people near a machine, a load limit, other people's data,
		// in words no cue of cues.go names.
		{"drone near people", "The drone must stay at least 30 metres away from spectators.",
			[]want{{Safety, "The drone must stay at least 30 metres away from spectators."}}},
		{"ladder load", "The ladder must not carry more than 150 kg.",
			[]want{{Safety, "The ladder must not carry more than 150 kg."}}},
		{"own grades", "Students only see their own grades.", []want{{Safety, "Students only see their own grades."}}},
		{"a failure now, after one before", "the build failed twice last week and it fails again now with exit code 2",
			[]want{{Blocking, "it fails again now with exit code 2"}}},

		// Distractors: no invariant.
		{"a failure in the past", "the build failed twice last week", nil},
		{"I have to say", "I have to say, the new docs are great.", nil},
		{"doesn't have to", "It doesn't have to be perfect, just readable.", nil},
		{"I must say", "I must say, this is great", nil},
		{"you must be", "you must be tired of me", nil},
		{"always happy", "always happy to learn", nil},
		{"at least it compiles", "at least it compiles now", nil},
		{"never mind a question", "never mind, I found it", nil},
		{"fixed error", "the KeyError from yesterday is fixed now, thanks", nil},
		{"error asked about", "what does exit code 137 mean?", nil},
		{"question about a rule", "must be in-state business to participate?", nil},
		{"safe as a topic", "Is the covid vaccine safe?", nil},
		{"not required", "it's not required", nil},
		{"no security requirement", "security isn't a concern for this prototype", nil},
		{"soft should", "it should have wifi", nil},
		{"soft ideally", "ideally under 100 lines", nil},
		{"nice to have", "dark mode would be nice to have", nil},
		{"if possible", "a sea view if possible", nil},
		{"quoted docs", `The docs say "tokens must never be logged". Why?`, nil},
		// Failures in words no cue was written for: the un-cued models, with the mode
		// classifier's reading of the message, find them; told as fixed, they are none.
		{"uncued failure, quoted output", "the nightly backup job exits right away with `no space left on device`. disk shows 40% used",
			[]want{{Blocking, "the nightly backup job exits right away with `no space left on device`."}}},
		{"uncued failure, wrong output", "since the upgrade every call to /export gives back `{\"rows\": []}` for tenants with more than 10 projects",
			[]want{{Blocking, "since the upgrade every call to /export gives back `{\"rows\": []}` for tenants with more than 10 projects"}}},
		{"uncued failure, fixed", "the nightly backup job exited right away with `no space left on device` last week, we fixed it", nil},
		// A message the mode classifier reads as DEBUGGING reports a failure even when no
		// clause reaches a threshold; "yesterday's figures" is no past tense.
		{"failing message, no failure words", "the PDF export cuts every table in half at the page edge",
			[]want{{Blocking, "the PDF export cuts every table in half at the page edge"}}},
		{"failing message, yesterday's", "the totals on the invoice page show yesterday's figures even after a reload, what am I missing?",
			[]want{{Blocking, "the totals on the invoice page show yesterday's figures even after a reload, what am I missing?"}}},
		// A bug report's "only" and "no" describe the failure; they ask nothing of the
		// solution (the gate), while a request's limit stays one.
		{"bug report's only", "pytest fails with `ImportError: cannot import name 'Settings'` but only on the CI runner, locally it passes",
			[]want{{Blocking, "`ImportError: cannot import name 'Settings'`"}}},
		{"trace then only", "KeyError: 'user_id'\n  at handler (app.py:41)\n\nonly happens when the session has expired",
			[]want{{Blocking, "KeyError: 'user_id'"}}},
		// A clause telling when the failure happens asks nothing of the solution (occasion).
		{"when it happens", "the upload fails with a 413. it only happens for files over 10 MB",
			[]want{{Blocking, "the upload fails with a 413."}}},
		{"where it shows up", "the chart flickers. it only shows up on the second monitor",
			[]want{{Blocking, "the chart flickers."}}},
		{"bug report's no", "the upload hangs at 99%. no error in the console.", []want{{Blocking, "the upload hangs at 99%."}}},
		{"a request's limit", "Summarise this article for me, at most 100 words", []want{{Constraint, "at most 100 words"}}},
		{"empty", "", nil},
		{"blank", " \n\t ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []want
			for _, s := range Detect(tc.msg) {
				got = append(got, want{s.Type, s.Text})
			}
			require.Equal(t, tc.want, got, "Detect(%q)", tc.msg)
		})
	}
}

// checkSpans fails unless spans are well formed for msg: each span's Text is msg[Start:End],
// non-empty, on rune boundaries, of a known type, and the spans are in message order.
func checkSpans(t *testing.T, msg string, spans []Span) {
	t.Helper()
	for i, s := range spans {
		require.True(t, 0 <= s.Start && s.Start < s.End && s.End <= len(msg), "span %d [%d,%d) of %q", i, s.Start, s.End, msg)
		require.Equal(t, msg[s.Start:s.End], s.Text, "span %d of %q", i, msg)
		require.True(t, utf8.ValidString(s.Text), "span %d of %q cuts a rune", i, msg)
		require.Equal(t, s.Text, strings.TrimSpace(s.Text), "span %d of %q has surrounding space", i, msg)
		require.Positive(t, s.Type.Priority(), "span %d of %q has type %q", i, msg, s.Type)
		if i > 0 {
			require.LessOrEqual(t, spans[i-1].Start, s.Start, "spans of %q out of order", msg)
		}
	}
}

func TestDetectOffsets(t *testing.T) {
	t.Parallel()
	for _, ex := range loadExamples(t) {
		checkSpans(t, ex.Text, Detect(ex.Text))
	}
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		"", "—", "\n", "must", "`unbalanced", `"half`, "Sorry, it's the EU cluster — not US. Which means nothing may leave eu-central-1.",
		"No , I want to be in the centre of town . What about architecture attractions ?",
		"api-1  | ModuleNotFoundError: No module named 'dotenv'\napi-1 exited with code 1",
		"npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
		"Ünïcödé must never be lost… ok? — fine; “quotes” and ‘these’",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if !utf8.ValidString(msg) {
			t.Skip()
		}
		checkSpans(t, msg, Detect(msg))
	})
}

// BenchmarkDetect times Detect, P(DEBUGGING) included, on chat messages, pasted output and the
// benchmark messages of modeltest (an ordinary question and the longest messages, as "m.NAME"):
//
//	go test ./invariant -run '^$' -bench Detect -count 6
func BenchmarkDetect(b *testing.B) {
	type message struct{ name, msg string }
	var messages []message
	for _, m := range modeltest.Messages {
		messages = append(messages, message{"m." + m.Name, m.Text})
	}
	for _, bc := range append([]message{
		{"sentence", "Never log the access token, not even at debug level. Students paste their debug output into the forum."},
		{"multiwoz", "No , I want to be in the centre of town . What about architecture attractions ?"},
		{"trace", "Traceback (most recent call last):\n  File \"ingest.py\", line 88, in <module>\n    main()\n" +
			"UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9"},
		// 8 KB of pasted log, the most a message may hold.
		{"log", strings.Repeat("2024-05-02T10:00:00Z worker-3 INFO processed batch 17 in 412ms, 512 chunks\n", 100) +
			"2024-05-02T10:00:01Z worker-3 ERROR OOMKilled (exit 137)"},
		// Reference phrases repeated up to 8 KB: one long sentence of many clauses.
		{"phrases2k", phrases(2 << 10)},
		{"phrases8k", phrases(8 << 10)},
	}, messages...) {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Detect(bc.msg)
			}
		})
	}
}

// TestLongSentenceCostsLinearWork checks that Detect's work grows with a message's length, not
// its square, on one long sentence of many clauses: each clause carries its sentence as context,
// and featurising it once per clause cost 1.2 s of CPU for 8 KB (the message cap). Work is
// counted in bytes allocated, which the quadratic step showed as plainly as time: 4x the text
// allocated 16x as much.
func TestLongSentenceCostsLinearWork(t *testing.T) {
	Detect(phrases(64)) // load the models first
	allocated := func(msg string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Detect(msg)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(phrases(2<<10)), allocated(phrases(8<<10))
	t.Logf("2 KB: %d bytes allocated, 8 KB: %d", small, large)
	require.Less(t, large, 6*small, "4x the text may cost about 4x the work, not 16x")
}

// phrases is n bytes of "the second one and the first one " repeated.
func phrases(n int) string {
	return strings.Repeat("the second one and the first one ", n/33+1)[:n]
}

func TestClauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{"Never log the access token, not even at debug level. Students paste their output.",
			[]string{"Never log the access token, not even at debug level.", "Students paste their output."}},
		{"it's the EU cluster, not US", []string{"it's the EU cluster, not US"}},
		{"I need to arrive much earlier , no later than 09:45 .", []string{"I need to arrive much earlier", "no later than 09:45"}},
		{"don't commit the .env file, and rotate the key", []string{"don't commit the .env file", "rotate the key"}},
		{"we have to keep the p99 under 1s AND never return other tenants' rows",
			[]string{"we have to keep the p99 under 1s", "never return other tenants' rows"}},
		{"mask emails and phone numbers", []string{"mask emails and phone numbers"}},
		{"Are you sure? I think so", []string{"Are you sure?", "I think so"}},
		{"I meant c. tschudii, e.g. the wild one", []string{"I meant c. tschudii, e.g. the wild one"}},
		{"it says \"Could not place order. Try again.\" every time", []string{"it says \"Could not place order. Try again.\" every time"}},
		{"npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve", []string{"npm ERR! code ERESOLVE", "npm ERR! ERESOLVE unable to resolve"}},
		{"zsh: illegal hardware instruction — as soon as it starts", []string{"zsh: illegal hardware instruction", "as soon as it starts"}},
		{"So long as it has parking. and it must be cheap", []string{"So long as it has parking.", "it must be cheap"}},
		{"", nil},
	} {
		var got []string
		for _, c := range clauses(tc.msg) {
			require.True(t, c.Sentence.Start <= c.Start && c.End <= c.Sentence.End, "clause inside its sentence")
			require.True(t, c.Line.Start <= c.Sentence.Start && c.Sentence.End <= c.Line.End, "sentence inside its line")
			got = append(got, tc.msg[c.Start:c.End])
		}
		require.Equal(t, tc.want, got, "clauses(%q)", tc.msg)
	}
}
