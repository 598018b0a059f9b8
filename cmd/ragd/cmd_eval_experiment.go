package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/mode"
)

type evalExperimentCmd struct {
	Tenant string    `help:"Tenant whose conversations are reported." default:"default"`
	From   time.Time `help:"First turn time counted (RFC 3339); default: all." format:"2006-01-02T15:04:05Z07:00"`
	To     time.Time `help:"Turns before this time (RFC 3339); default: all." format:"2006-01-02T15:04:05Z07:00"`
	JSON   bool      `help:"Print the report as JSON." name:"json"`
}

// Run reports the A/B experiment of the database's conversations (the design and arms of
// --experiment) of one tenant, per arm and mode stratum, as GET /v1/admin/experiment does.
func (c evalExperimentCmd) Run(ctx context.Context, a *app) error {
	if err := a.openStore(ctx, a.cfg.Schema, false); err != nil {
		return err
	}
	tenant, err := a.store.TenantID(ctx, c.Tenant) // a report never creates the tenant it is asked about
	if err != nil {
		return fmt.Errorf("--tenant: %w", err)
	}
	ctx = ragd.WithPrincipal(ctx, ragd.Principal{Tenant: tenant, Role: ragd.RoleAuditor})
	rows, err := a.store.ExperimentStats(ctx, ragd.ExperimentFilter{From: c.From, To: c.To})
	if err != nil {
		return err
	}
	modes := make([]string, len(mode.Modes))
	for i, m := range mode.Modes {
		modes[i] = string(m)
	}
	r := experiment.NewReport(a.cfg.experimentConfig(), rows, modes)
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.WriteText(os.Stdout)
}
