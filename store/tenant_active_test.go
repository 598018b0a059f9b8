package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/store"
)

// The tenants start-up warms are those that hold documents, the latest to ingest or converse
// first, read across tenants by the application role that row-level security binds.
func TestActiveTenantIDsOrdersByLatestActivity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := dbtest.NewDatabase(t)
	s, err := store.Open(ctx, store.Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true})
	require.NoError(t, err)
	defer s.Close()
	alpha := ragd.DefaultTenant
	beta, err := s.EnsureTenant(ctx, "beta")
	require.NoError(t, err)
	_, err = s.EnsureTenant(ctx, "gamma") // no documents: nothing to warm
	require.NoError(t, err)
	as := func(tenant uuid.UUID) context.Context { return ragd.WithPrincipal(ctx, ragd.Principal{Tenant: tenant}) }
	ingest := func(tctx context.Context, key string) {
		_, err := s.SaveVersions(tctx, []ragd.NewVersion{version(key, "h", "text of "+key)})
		require.NoError(t, err)
	}
	active := func(n int) []uuid.UUID {
		ids, err := s.ActiveTenantIDs(ctx, n)
		require.NoError(t, err)
		return ids
	}

	ingest(as(alpha), "a")
	ingest(as(beta), "b")
	require.Equal(t, []uuid.UUID{beta, alpha}, active(8), "beta ingested last")

	_, err = s.Turn(as(alpha), ragd.ConversationRef{ID: uuid.Must(uuid.NewV7()), New: true},
		func(*ragd.ConversationState) (*ragd.TurnWrite, error) {
			return &ragd.TurnWrite{UserMessage: "q", Answer: "a"}, nil
		})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{alpha, beta}, active(8), "alpha conversed since")
	require.Equal(t, []uuid.UUID{alpha}, active(1))
	require.Empty(t, active(0))
}
