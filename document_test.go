package ragd_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// A document's own date wins; an undated one shows the day it was ingested, as such.
func TestDocumentDate(t *testing.T) {
	t.Parallel()
	published, ingested := time.Date(2019, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	date, kind := ragd.DocumentDate(&published, ingested)
	require.Equal(t, published, date)
	require.Equal(t, ragd.DatePublished, kind)
	date, kind = ragd.DocumentDate(nil, ingested)
	require.Equal(t, ingested, date)
	require.Equal(t, ragd.DateIngested, kind)
}

func TestPassageText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Flood Safety\nBefore > Kits\nStore water.", ragd.PassageText("Flood Safety", "Before > Kits", "Store water."))
	require.Equal(t, "Flood Safety\nStore water.", ragd.PassageText("Flood Safety", "", "Store water."), "no heading, no empty line")
	require.Equal(t, "Store water.", ragd.PassageText("", "", "Store water."))
}
