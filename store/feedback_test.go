package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
)

func TestExperimentSlotsAndBaselines(t *testing.T) {
	t.Parallel()
	ctx, s := setup(t)
	globex, err := s.EnsureTenant(ctx, "globex")
	require.NoError(t, err)
	acme := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: ragd.DefaultTenant, Role: ragd.RoleAdmin})
	other := ragd.WithPrincipal(ctx, ragd.Principal{Tenant: globex, Role: ragd.RoleAdmin})
	for want := int64(0); want < 3; want++ {
		got, err := s.NextExperimentSlot(acme, "budgets")
		require.NoError(t, err)
		require.Equal(t, want, got, "slots count per tenant and design")
	}
	got, err := s.NextExperimentSlot(other, "budgets")
	require.NoError(t, err)
	require.Zero(t, got, "another tenant has its own slots")
	got, err = s.NextExperimentSlot(acme, "recent-window")
	require.NoError(t, err)
	require.Zero(t, got)

	require.NoError(t, s.SaveModeBaseline(acme, []byte(`{"distribution":{"TASK":1},"source":"set"}`)))
	require.NoError(t, s.SaveModeBaseline(acme, []byte(`{"distribution":{"TASK":2},"source":"set"}`)))
	require.Error(t, s.SaveModeBaseline(acme, []byte(`{`)))
	bs, err := s.ModeBaselines(acme)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	require.JSONEq(t, `{"distribution":{"TASK":2},"source":"set"}`, string(bs[ragd.DefaultTenant]), "the latest replaces")
	bs, err = s.ModeBaselines(other)
	require.NoError(t, err)
	require.Empty(t, bs, "another tenant sees no baseline of the first")
	require.NoError(t, s.SaveModeBaseline(other, []byte(`{"distribution":{"LEARNING":1},"source":"set"}`)))
	bs, err = s.ModeBaselines(ragd.AllTenants(ctx))
	require.NoError(t, err)
	var tenants []uuid.UUID
	for k := range bs {
		tenants = append(tenants, k)
	}
	require.ElementsMatch(t, []uuid.UUID{ragd.DefaultTenant, globex}, tenants, "maintenance reads every tenant's")
}
