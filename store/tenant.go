package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd"
)

// AppRole is the PostgreSQL role ragd works as (migration 005 creates it).
const AppRole = "ragd_app"

// sessionOf returns the ragd.tenant and ragd.key settings for ctx's principal.
func sessionOf(ctx context.Context) (tenant, key string) {
	p := ragd.PrincipalOf(ctx)
	if p.All {
		return "all", ""
	}
	if p.KeyID != uuid.Nil {
		key = p.KeyID.String()
	}
	return p.Tenant.String(), key
}

// actingFor is the key under which a pool connection remembers the settings it was last given
// (pgconn's CustomData, which lives and dies with the connection).
const actingFor = "ragd.acting_for"

// actFor gives a pool connection, as it is handed out, ctx's ragd.tenant and ragd.key settings,
// unless it has them already: a turn checks out a connection four times, and saying the same
// settings again cost a statement each time. The connection then holds exactly what it
// remembers, because the settings are session-level and set here only, outside any
// transaction (pgxpool hands out idle connections, and destroys one released inside a
// transaction), so only the next set_config here changes them; nothing else in ragd sets them.
// What the connection remembers is forgotten before the statement and kept only after it
// succeeded; on an error the pool destroys the connection (PrepareConn returns false). A new
// connection remembers nothing, and has no tenant: row-level security shows it nothing.
func actFor(ctx context.Context, conn *pgx.Conn) error {
	tenant, key := sessionOf(ctx)
	want := tenant + "/" + key
	data := conn.PgConn().CustomData()
	if data[actingFor] == want {
		return nil
	}
	delete(data, actingFor)
	if _, err := conn.Exec(ctx, "SELECT set_config('ragd.tenant', $1, false), set_config('ragd.key', $2, false)", tenant, key); err != nil {
		return err
	}
	data[actingFor] = want
	return nil
}

// tenantOf is the tenant a query of ctx filters by, explicitly, beside row-level security.
func tenantOf(ctx context.Context) uuid.UUID { return ragd.PrincipalOf(ctx).Tenant }

// keyPrefix starts every secret, so a leaked one is recognisable (and greppable).
const keyPrefix = "ragd_"

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// TenantIDs lists every tenant, for maintenance that works tenant by tenant.
func (s *Store) TenantIDs(ctx context.Context) ([]uuid.UUID, error) {
	rows, err := s.db.Query(ctx, "SELECT id FROM tenants ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("store: listing tenants: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("store: listing tenants: %w", err)
	}
	return ids, nil
}

// ActiveTenantIDs lists at most n tenants that hold documents, the most recently active first:
// by the latest update of any of their conversations or documents. Start-up warms these, since
// the tenants that asked or ingested last are the likeliest to ask next; a tenant without
// documents has nothing to warm. It reads across tenants, as maintenance does.
func (s *Store) ActiveTenantIDs(ctx context.Context, n int) ([]uuid.UUID, error) {
	ctx = ragd.WithPrincipal(ctx, ragd.Principal{All: true})
	// One probe of each tenant's recent-first index per table, not a scan of either table.
	rows, err := s.db.Query(ctx, `SELECT t.id FROM tenants t
		JOIN LATERAL (SELECT d.updated_at FROM documents d WHERE d.tenant_id = t.id AND d.deleted_at IS NULL
			ORDER BY d.updated_at DESC, d.id DESC LIMIT 1) d ON true
		LEFT JOIN LATERAL (SELECT c.updated_at FROM conversations c WHERE c.tenant_id = t.id AND c.deleted_at IS NULL
			ORDER BY c.updated_at DESC, c.id DESC LIMIT 1) c ON true
		ORDER BY greatest(d.updated_at, c.updated_at) DESC, t.id
		LIMIT $1`, n)
	if err != nil {
		return nil, fmt.Errorf("store: listing active tenants: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("store: listing active tenants: %w", err)
	}
	return ids, nil
}

// EnsureTenant returns the id of the tenant named name, creating it when it does not exist.
func (s *Store) EnsureTenant(ctx context.Context, name string) (uuid.UUID, error) {
	id, err := s.TenantID(ctx, name)
	if !errors.Is(err, ragd.ErrNotFound) {
		return id, err
	}
	name = strings.TrimSpace(name)
	if id, err = uuid.NewV7(); err != nil {
		return uuid.Nil, err
	}
	// ON CONFLICT DO NOTHING and read again: a concurrent creation of the same name wins.
	tag, err := s.db.Exec(ctx, `INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, id, name)
	if err == nil {
		err = s.db.QueryRow(ctx, "SELECT id FROM tenants WHERE name = $1", name).Scan(&id)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("store: creating tenant %q: %w", name, err)
	}
	if tag.RowsAffected() == 1 {
		// Names are exact ("Acme" is not "acme"): a misspelt one makes a new, empty tenant.
		s.logger.InfoContext(ctx, "created a new tenant", slog.String("tenant", name))
	}
	return id, nil
}

// TenantID returns the id of the tenant named name (trimmed), ragd.ErrNotFound if there is none.
func (s *Store) TenantID(ctx context.Context, name string) (uuid.UUID, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return uuid.Nil, ragd.Invalidf("tenant", "a tenant name is 1 to 100 characters")
	}
	var id uuid.UUID
	err := s.db.QueryRow(ctx, "SELECT id FROM tenants WHERE name = $1", name).Scan(&id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return uuid.Nil, fmt.Errorf("no tenant named %q: %w", name, ragd.ErrNotFound)
	case err != nil:
		return uuid.Nil, fmt.Errorf("store: reading tenant %q: %w", name, err)
	}
	return id, nil
}

// CreateKey makes a key of ctx's tenant with role and returns it with its secret, which is
// shown once: only its hash is kept.
func (s *Store) CreateKey(ctx context.Context, role ragd.Role, name string) (*ragd.Key, string, error) {
	if !role.Valid() {
		return nil, "", ragd.Invalidf("role", "%q: want chat, auditor or admin", role)
	}
	if len(name) > 200 {
		return nil, "", ragd.Invalidf("name", "is over 200 bytes")
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, "", err
	}
	secret := keyPrefix + base64.RawURLEncoding.EncodeToString(b)
	id, err := uuid.NewV7()
	if err != nil {
		return nil, "", err
	}
	k := &ragd.Key{ID: id, Tenant: tenantOf(ctx), Name: name, Role: role, Prefix: secret[:len(keyPrefix)+6]}
	err = s.db.QueryRow(ctx, `INSERT INTO api_keys (id, tenant_id, name, role, prefix, hash) VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING created_at, (SELECT name FROM tenants WHERE id = $2)`,
		k.ID, k.Tenant, k.Name, string(k.Role), k.Prefix, hashSecret(secret)).Scan(&k.CreatedAt, &k.TenantName)
	if err != nil {
		return nil, "", fmt.Errorf("store: creating key: %w", err)
	}
	return k, secret, nil
}

const keyColumns = `k.id, k.tenant_id, t.name, k.name, k.role, k.prefix, k.created_at, k.revoked_at`

func scanKey(row pgx.CollectableRow) (ragd.Key, error) {
	var k ragd.Key
	var role string
	err := row.Scan(&k.ID, &k.Tenant, &k.TenantName, &k.Name, &role, &k.Prefix, &k.CreatedAt, &k.RevokedAt)
	k.Role = ragd.Role(role)
	return k, err
}

// Keys lists the keys of ctx's tenant (of every tenant for maintenance), revoked ones included.
func (s *Store) Keys(ctx context.Context) ([]ragd.Key, error) {
	q := "SELECT " + keyColumns + " FROM api_keys k JOIN tenants t ON t.id = k.tenant_id"
	args := []any{}
	if !ragd.PrincipalOf(ctx).All {
		q += " WHERE k.tenant_id = $1"
		args = append(args, tenantOf(ctx))
	}
	rows, err := s.db.Query(ctx, q+" ORDER BY k.created_at, k.id", args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing keys: %w", err)
	}
	ks, err := pgx.CollectRows(rows, scanKey)
	if err != nil {
		return nil, fmt.Errorf("store: listing keys: %w", err)
	}
	return ks, nil
}

// RevokeKey revokes a key of ctx's tenant; it stops working at once. Revoking it again is a
// no-op.
func (s *Store) RevokeKey(ctx context.Context, id uuid.UUID) error {
	q := "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1"
	args := []any{id}
	if !ragd.PrincipalOf(ctx).All {
		q += " AND tenant_id = $2"
		args = append(args, tenantOf(ctx))
	}
	tag, err := s.db.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: revoking key %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("key %s: %w", id, ragd.ErrNotFound)
	}
	return nil
}

// Authenticate returns the principal of a secret, or ErrUnauthenticated for an unknown or
// revoked one. The lookup is by hash, across tenants (the key names its tenant).
func (s *Store) Authenticate(ctx context.Context, secret string) (ragd.Principal, error) {
	if !strings.HasPrefix(secret, keyPrefix) {
		return ragd.Principal{}, ragd.ErrUnauthenticated
	}
	var p ragd.Principal
	var role string
	err := s.db.QueryRow(ragd.AllTenants(ctx), `SELECT id, tenant_id, role FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`,
		hashSecret(secret)).Scan(&p.KeyID, &p.Tenant, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return ragd.Principal{}, ragd.ErrUnauthenticated
	}
	if err != nil {
		return ragd.Principal{}, fmt.Errorf("store: authenticating: %w", err)
	}
	p.Role = ragd.Role(role)
	return p, nil
}

// KeysMade counts the keys ever made, of every tenant, revoked ones included: with none, ragd
// may serve openly. Revoking every key must not reopen the API to anyone who can reach it.
func (s *Store) KeysMade(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ragd.AllTenants(ctx), "SELECT count(*) FROM api_keys").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting keys: %w", err)
	}
	return n, nil
}
