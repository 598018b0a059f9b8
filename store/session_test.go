package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/internal/dbtest"
)

// One pool connection handed out to tenant after tenant (and key after key), in and outside
// transactions, after a failed one, says every time the settings of the caller it is handed to,
// and row-level security alone (no tenant filter in the query) shows it only that tenant's rows,
// though the connection skips the set_config when it holds the settings already.
func TestPoolConnectionActsForEachCaller(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := dbtest.NewDatabase(t)
	s, err := Open(ctx, Config{URL: dbtest.AppURL(t, url), OwnerURL: url, EmbeddingDim: dbtest.Dim, Migrate: true, MaxConns: 1})
	require.NoError(t, err)
	defer s.Close()
	beta, err := s.EnsureTenant(ctx, "beta")
	require.NoError(t, err)
	alpha := ragd.DefaultTenant
	docs := map[uuid.UUID]int{alpha: 2, beta: 1}
	for tenant, n := range docs {
		for i := range n {
			v := ragd.NewVersion{SourceKey: fmt.Sprintf("k%d", i), Format: "text", Title: "t", ContentHash: "h", Bytes: 1,
				Chunks: []ragd.Chunk{{Text: "x", Tokens: 1}}}
			_, err := s.SaveVersions(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: tenant}), []ragd.NewVersion{v})
			require.NoError(t, err)
		}
	}
	key := uuid.New()
	callers := []ragd.Principal{
		{Tenant: alpha}, {Tenant: alpha}, {Tenant: beta}, {Tenant: beta, KeyID: key}, {Tenant: beta},
		{All: true}, {Tenant: alpha}, {Tenant: alpha, KeyID: key}, {Tenant: beta}, {All: true}, {All: true}, {Tenant: alpha},
	}
	pid := 0
	check := func(p ragd.Principal, db DB, where string) {
		pctx := ragd.WithPrincipal(ctx, p)
		t.Helper()
		var (
			backend, n     int
			tenant, keyStr string
		)
		require.NoError(t, db.QueryRow(pctx, `SELECT pg_backend_pid(), current_setting('ragd.tenant'), current_setting('ragd.key'),
			(SELECT count(*) FROM documents)`).Scan(&backend, &tenant, &keyStr, &n), where)
		if pid == 0 {
			pid = backend
		}
		require.Equal(t, pid, backend, "%s: one connection throughout", where)
		wantTenant, wantKey, wantDocs := p.Tenant.String(), "", docs[p.Tenant]
		if p.All {
			wantTenant, wantDocs = "all", docs[alpha]+docs[beta]
		}
		if p.KeyID != uuid.Nil {
			wantKey = p.KeyID.String()
		}
		require.Equal(t, wantTenant, tenant, where)
		require.Equal(t, wantKey, keyStr, where)
		require.Equal(t, wantDocs, n, "%s: the documents row-level security shows", where)
	}
	boom := errors.New("rolled back")
	for i, p := range callers {
		pctx := ragd.WithPrincipal(ctx, p)
		check(p, s.db, fmt.Sprintf("call %d %+v", i, p))
		require.NoError(t, s.InTx(pctx, func(tx *Store) error {
			check(p, tx.db, fmt.Sprintf("call %d %+v in a transaction", i, p))
			return nil
		}))
		err := s.InTx(pctx, func(tx *Store) error {
			_, err := tx.db.Exec(pctx, "SELECT 1/0")
			require.Error(t, err)
			return boom
		})
		require.ErrorIs(t, err, boom)
		check(p, s.db, fmt.Sprintf("call %d %+v after a failed transaction", i, p))
	}
	conn, err := s.pool.Acquire(ragd.WithPrincipal(ctx, ragd.Principal{Tenant: beta, KeyID: key}))
	require.NoError(t, err)
	require.Equal(t, beta.String()+"/"+key.String(), conn.Conn().PgConn().CustomData()[actingFor], "the connection remembers its settings")
	conn.Release()
}
