package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/mode"
)

// ragd eval experiment reads the database the server writes and prints the report of the
// configured design, every stratum with its arms, even before any turn.
func TestEvalExperiment(t *testing.T) {
	cli, err := parse(t, nil, "version", "--database-url", dbtest.NewDatabase(t), "--control-ratio", "0.5")
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	defer a.close()

	out := captureStdout(t, func() { require.NoError(t, evalExperimentCmd{Tenant: "default"}.Run(context.Background(), a)) })
	require.Contains(t, out, "experiment: budgets (treatment budgets: free); control arm control")
	require.Contains(t, out, "stratum all")
	require.Contains(t, out, "treatment vs control: completion diff +0.000")

	// A misspelt tenant is an error, and the report does not create it.
	err = evalExperimentCmd{Tenant: "Default"}.Run(context.Background(), a)
	require.ErrorContains(t, err, `--tenant: no tenant named "Default"`)
	ids, err := a.store.TenantIDs(ragd.AllTenants(context.Background()))
	require.NoError(t, err)
	require.Len(t, ids, 1, "only the default tenant")
}

func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	fn()
	os.Stdout = old
	require.NoError(t, w.Close())
	return string(bytes.TrimSpace(<-done))
}

// A drift baseline set at run time is saved: the guardrails of a restarted server have it.
func TestGuardrailsKeepTheBaseline(t *testing.T) {
	url := dbtest.NewDatabase(t)
	start := func() (*app, func()) {
		cli, err := parse(t, nil, "version", "--database-url", url)
		require.NoError(t, err)
		a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
		require.NoError(t, a.openStore(context.Background(), "", true))
		return a, a.close
	}
	tenant := ragd.DefaultTenant.String()
	a, stop := start()
	mon, err := a.monitors(context.Background())
	require.NoError(t, err)
	_, ok := mon.Drift.Baseline(tenant)
	require.False(t, ok, "a new tenant observes its reference period")
	b, err := mode.ParseBaseline("TASK=0.5,LEARNING=0.5")
	require.NoError(t, err)
	require.NoError(t, mon.Drift.SetBaseline(tenant, b))
	stop()

	a, stop = start()
	defer stop()
	mon, err = a.monitors(context.Background())
	require.NoError(t, err)
	got, ok := mon.Drift.Baseline(tenant)
	require.True(t, ok, "kept across the restart")
	require.Equal(t, b.Distribution, got.Distribution)
	require.True(t, mon.Experiment.Enabled())
}
