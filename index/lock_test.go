package index_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/index"
)

// A second process that finds the index locked says, once and before it waits, which lock it
// waits for and who holds it; when the wait runs out, its error says the same. Closing the
// index takes its name off.
func TestLockedIndexSaysWhatItWaitsForAndWho(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ix, err := index.Open(dir, nil)
	require.NoError(t, err)

	var log bytes.Buffer
	_, err = index.Open(dir, slog.New(slog.NewTextHandler(&log, nil)))
	require.ErrorIs(t, err, index.ErrLocked)
	lock, holder := filepath.Join(dir, "layout.bolt"), fmt.Sprintf("pid %d (%s)", os.Getpid(), filepath.Base(os.Args[0]))
	require.Contains(t, err.Error(), "the lock "+lock+" is held by "+holder)
	require.Contains(t, err.Error(), "was not free after 2s")
	require.Equal(t, 1, strings.Count(log.String(), "waiting for the BM25 index's lock"), "%s", log.String())
	require.Contains(t, log.String(), "lock="+lock)
	require.Contains(t, log.String(), `holder="`+holder)

	require.NoError(t, ix.Close())
	_, err = os.Stat(filepath.Join(dir, "layout.holder"))
	require.ErrorIs(t, err, os.ErrNotExist, "a closed index leaves no name behind")
	log.Reset()
	ix, err = index.Open(dir, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	require.NotContains(t, log.String(), "waiting", "a free index is opened without a wait")
	require.NoError(t, ix.Close())
}
