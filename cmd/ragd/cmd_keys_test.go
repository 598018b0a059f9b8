package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// keys list --tenant with a tenant that does not exist (a typo, a wrong case) says so, instead of
// listing no key as if the tenant had none.
func TestKeysListNamesAMissingTenant(t *testing.T) {
	cli, err := parse(t, nil, "version", "--database-url", dbtest.NewDatabase(t))
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	defer a.close()
	ctx := context.Background()
	require.NoError(t, keysCreateCmd{Tenant: "acme", Role: "chat"}.Run(ctx, a))

	out := captureStdout(t, func() { require.NoError(t, keysListCmd{Tenant: "acme"}.Run(ctx, a)) })
	require.Contains(t, out, "acme")
	err = keysListCmd{Tenant: "Acme"}.Run(ctx, a)
	require.ErrorContains(t, err, `--tenant: no tenant named "Acme"`)
}
