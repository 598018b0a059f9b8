package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

// SearchTitle ranks the text among the chunks of one title, the caller's tenant's only; DocFreq
// counts the tenant's chunks per field.
func TestSearchTitle(t *testing.T) {
	t.Parallel()
	ix, err := Open(filepath.Join(t.TempDir(), "bm25"), nil)
	require.NoError(t, err)
	other := uuid.MustParse("0190f5b4-0000-7000-8000-0000000000b2")
	require.NoError(t, ix.apply([]ragd.ChunkChange{
		{ID: 1, Seq: 1, Active: true, Title: "HOBSONS HOUSE", Text: "Breakfast was cold."},
		{ID: 2, Seq: 2, Active: true, Title: "HOBSONS HOUSE", Text: "The bathroom was spotless."},
		{ID: 3, Seq: 3, Active: true, Title: "ALLENBELL", Text: "The bathrooms were not clean, mould in the bathrooms."},
		{ID: 4, Seq: 4, Active: true, Title: "HOBSONS HOUSE", Text: "Another tenant's bathroom review.", Tenant: other},
		{ID: 5, Seq: 5, Active: true, Title: "HOBSONS GARDEN", Text: "A bathroom in the garden shed."},
	}))
	ids := func(ctx context.Context, text, title string) []int64 {
		t.Helper()
		hits, err := ix.SearchTitle(ctx, text, title, 10)
		require.NoError(t, err)
		var out []int64
		for i, h := range hits {
			require.Equal(t, i+1, h.Rank)
			out = append(out, h.ChunkID)
		}
		return out
	}
	ctx := context.Background()
	require.Equal(t, []int64{2}, ids(ctx, "is the bathroom clean?", "HOBSONS HOUSE"),
		"the text among chunks with every word of the title (not HOBSONS GARDEN's), the other tenant's left out")
	require.Equal(t, []int64{3}, ids(ctx, "is the bathroom clean?", "allenbell"))
	require.Equal(t, []int64{4}, ids(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: other}), "bathroom", "Hobsons House"),
		"and the other tenant sees its own")
	require.Empty(t, ids(ctx, "bathroom", "GONVILLE HOTEL"))
	_, err = ix.SearchTitle(ctx, "bathroom", "ALLENBELL", 0)
	require.ErrorIs(t, err, ragd.ErrInvalid)

	df, err := ix.DocFreq(ctx, "title", []string{"hobson", "allenbel", "bathroom"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"hobson": 3, "allenbel": 1, "bathroom": 0}, df, "the tenant's chunks only")
	df, err = ix.DocFreq(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: other}), "title", []string{"hobson", "allenbel"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"hobson": 1, "allenbel": 0}, df, "and the other tenant counts its own")
	df, err = ix.DocFreq(ctx, "_all", []string{"bathroom"})
	require.NoError(t, err)
	require.Equal(t, 3, df["bathroom"], "bathroom and bathrooms, stemmed; the tenant's own")

	require.NoError(t, ix.Close())
	_, err = ix.DocFreq(ctx, "_all", []string{"bathroom"})
	require.ErrorIs(t, err, ErrClosed, "a closed index says so rather than crash")
}
