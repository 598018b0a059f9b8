package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Markers are stable in full: over five turns, a marker always names the same sentence of the
// same document, a sentence always has the same marker, and a turn's sources hold one source per
// letter. What the auditor reads back is what the chat was given.
func TestMarkersStableAcrossFiveTurns(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	questions := []string{
		"What should I do if I smell gas after an earthquake?",
		"Is it the same for floods?",
		"what about the gas line after the earthquake",
		"I smell gas, what now?",
		"should I turn off the gas at the meter",
	}
	sentenceOf := map[string]string{} // marker -> doc and sentence
	markerOf := map[string]string{}   // doc and sentence -> marker
	turnsOf := map[string]int{}       // marker -> turns that cited it
	conv := ""
	for i, q := range questions {
		r := b.ask(t, conv, q)
		conv = r.ConversationID
		require.Equal(t, i+1, r.Turn)
		checkTurn(t, r)
		letters := map[string]bool{}
		for _, s := range r.Sources {
			require.False(t, letters[s.Letter], "turn %d: letter %s names one source", r.Turn, s.Letter)
			letters[s.Letter] = true
			for _, f := range s.Facts {
				key := s.DocID + " " + strings.Join(strings.Fields(f.Text), " ")
				if was, ok := sentenceOf[f.Marker]; ok {
					require.Equal(t, was, key, "turn %d: [%s] names the sentence it named before", r.Turn, f.Marker)
				}
				if was, ok := markerOf[key]; ok {
					require.Equal(t, was, f.Marker, "turn %d: a sentence keeps its marker", r.Turn)
				}
				sentenceOf[f.Marker], markerOf[key] = key, f.Marker
				turnsOf[f.Marker]++
			}
		}
		facts := map[string]string{}
		for _, s := range r.Sources {
			for _, f := range s.Facts {
				facts[f.Marker] = f.Text
			}
		}
		for _, c := range b.citationsOf(t, r.MessageID) {
			require.Equal(t, facts[c.Marker], c.Fact, "the auditor reads the fact behind [%s]", c.Marker)
		}
	}
	again := 0
	for _, n := range turnsOf {
		if n > 1 {
			again++
		}
	}
	require.Positive(t, again, "some sentences were cited in several turns, under one marker")
	t.Logf("%d markers over five turns, %d cited in more than one turn", len(turnsOf), again)
}

// The fact sheet shows a document's own date as is and an undated document's ingest day as
// such: an old undated document must not read as published the day it was ingested.
func TestAnswerSaysWhichDateItShows(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	turn := b.ask(t, "", "What should I do if I smell gas after an earthquake?")
	kinds := map[string]bool{}
	for _, s := range turn.Sources {
		label := s.Date
		if s.DateKind == "ingested" {
			label = "ingested " + s.Date
		}
		require.Contains(t, turn.Answer, s.Letter+". "+s.Title+" ("+label+")")
		kinds[s.DateKind] = true
	}
	require.True(t, kinds["published"] && kinds["ingested"], "the question finds a dated and an undated document: %v", kinds)
}
