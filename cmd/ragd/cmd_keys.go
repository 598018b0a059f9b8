package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
)

type keysCmd struct {
	Create keysCreateCmd `cmd:"" help:"Create an API key and print its secret (shown once) alone on the last line."`
	List   keysListCmd   `cmd:"" help:"List API keys (never their secrets)."`
	Revoke keysRevokeCmd `cmd:"" help:"Revoke an API key: it stops working at once."`
}

type keysCreateCmd struct {
	Tenant string `help:"Tenant of the key, created when new." default:"default"`
	Role   string `help:"Role of the key: chat (ask, pins, replies, its tenant's conversations), auditor (read-only), admin (documents, keys, everything of its tenant)." enum:"chat,auditor,admin" required:""`
	Name   string `help:"A name to recognise the key by."`
}

// Run works with or without a running server: it migrates the schema if needed, so the first key
// can be made before the first `ragd serve`.
func (c keysCreateCmd) Run(ctx context.Context, a *app) error {
	if err := a.openStore(ctx, a.cfg.Schema, true); err != nil {
		return err
	}
	tenant, err := a.store.EnsureTenant(ctx, c.Tenant)
	if err != nil {
		return fmt.Errorf("--tenant: %w", err)
	}
	ctx = ragd.WithPrincipal(ctx, ragd.Principal{Tenant: tenant, Role: ragd.RoleAdmin})
	k, secret, err := a.store.CreateKey(ctx, ragd.Role(c.Role), c.Name)
	if err != nil {
		return err
	}
	fmt.Printf("created %s key %s (%s) in tenant %s; the secret below is shown once:\n", k.Role, k.ID, k.Prefix, k.TenantName)
	fmt.Println(secret)
	return nil
}

type keysListCmd struct {
	Tenant string `help:"Only the keys of this tenant."`
}

func (c keysListCmd) Run(ctx context.Context, a *app) error {
	if err := a.openStore(ctx, a.cfg.Schema, true); err != nil {
		return err
	}
	if c.Tenant != "" {
		// A misspelt tenant would list no key, as if the tenant had none.
		if _, err := a.store.TenantID(ctx, c.Tenant); err != nil {
			return fmt.Errorf("--tenant: %w", err)
		}
	}
	ks, err := a.store.Keys(ragd.AllTenants(ctx))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTENANT\tROLE\tPREFIX\tNAME\tCREATED\tREVOKED")
	for _, k := range ks {
		if c.Tenant != "" && k.TenantName != strings.TrimSpace(c.Tenant) {
			continue
		}
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.TenantName, k.Role, k.Prefix, k.Name,
			k.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

type keysRevokeCmd struct {
	ID string `arg:"" help:"The key's id (from ragd keys list)."`
}

func (c keysRevokeCmd) Run(ctx context.Context, a *app) error {
	id, err := uuid.Parse(c.ID)
	if err != nil {
		return fmt.Errorf("%q is not a key id", c.ID)
	}
	if err := a.openStore(ctx, a.cfg.Schema, true); err != nil {
		return err
	}
	if err := a.store.RevokeKey(ragd.AllTenants(ctx), id); err != nil {
		return err
	}
	fmt.Println("revoked", id)
	return nil
}
