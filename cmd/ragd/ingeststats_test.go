package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ingest"
)

// Ingest's stages overlap, so the summary gives each its busy time against the wall time and
// says so: an embedding stage busy the whole run is 100% however long the others took.
func TestIngestStatsSayStagesOverlap(t *testing.T) {
	var b strings.Builder
	printIngestStats(&b, ingest.Stats{Created: 3, Chunks: 100, Extract: time.Second, Embed: 10 * time.Second,
		Store: 2 * time.Second, Elapsed: 10 * time.Second}, 0)
	out := b.String()
	require.Contains(t, out, "chunks written: 100 in 10s (10.0 chunks/s)")
	require.Contains(t, out, "busy time (stages overlap; share of the wall time): extract+chunk 1s (10%), embed 10s (100%), postgres 2s (20%); bm25 index after the last batch 0s (0%)")
	require.Contains(t, out, "embed stage: 10.0 chunks/s of its busy time")
}

// Files a directory walk left out are counted and the first few named in the summary, with the
// extensions ingest reads: a mixed directory's other files no longer vanish without a word.
func TestIngestStatsNameSkippedFiles(t *testing.T) {
	var b strings.Builder
	printIngestStats(&b, ingest.Stats{Created: 1, Skipped: 5, SkippedNames: []string{"d/a.png", "d/notes", "d/x.csv"}}, 0)
	require.Contains(t, b.String(), "documents: 1 created, 0 updated, 0 unchanged, 0 failed\n"+
		"skipped: 5 files in directories, not of an extension ingest reads (.htm .html .jsonl .markdown .md .pdf .text .txt): d/a.png, d/notes, d/x.csv, ...\n")
	b.Reset()
	printIngestStats(&b, ingest.Stats{Created: 1}, 0)
	require.NotContains(t, b.String(), "skipped")
}
