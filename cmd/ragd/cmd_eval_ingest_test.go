package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/internal/modeltest"
)

// eval ingest measures each part on the same work both ways, and what it ingests part by part is
// the whole corpus, every chunk with its vector.
func TestEvalIngestMeasuresTheSameWorkByPart(t *testing.T) {
	dbURL := dbtest.NewDatabase(t)
	var corpus strings.Builder
	const docs = 130 // two batches of 64 and one of 2: parts of two batches and of one
	for i := range docs {
		fmt.Fprintf(&corpus, `{"_id":"d%d","title":"Note %d","text":"Valve %d in boiler room %d is checked on Mondays."}`+"\n", i, i, i, i%7)
	}
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(corpus.String()), 0o644))

	args := []string{"--data-dir", t.TempDir(), "--embed-model", modeltest.Dir(t, modeltest.Embedding), "eval", "ingest", "--parts", "2", path}
	if lib := modeltest.ORTLibrary(); lib != "" {
		args = append([]string{"--ort-library", lib}, args...)
	}
	out, err := ragdCmd(t, dbURL, args...).Output()
	require.NoError(t, err, "%s", out)
	parts := regexp.MustCompile(`(?m)^\s+(\d+)\s+(\d+)\s+\d`).FindAllStringSubmatch(string(out), -1)
	require.Len(t, parts, 2, "%s", out)
	require.Equal(t, []string{"1", "128"}, parts[0][1:], "the first part is two whole batches")
	require.Equal(t, []string{"2", "2"}, parts[1][1:])
	require.Contains(t, string(out), fmt.Sprintf("the same %d chunks in the same batches", docs))
	require.Regexp(t, `by part: median \d\.\d{3}, min \d\.\d{3}, max \d\.\d{3}, mean \d\.\d{3} \(95% bootstrap interval`, string(out))

	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var documents, chunks, vectors int
	require.NoError(t, conn.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM eval_ingest.documents), count(*), count(embedding) FROM eval_ingest.chunks`).Scan(&documents, &chunks, &vectors))
	require.Equal(t, []int{docs, docs, docs}, []int{documents, chunks, vectors})
}
