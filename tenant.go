package ragd

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// DefaultTenant owns everything of the single-user case: rows written before tenants existed,
// and every request while ragd serves without keys.
var DefaultTenant = uuid.MustParse("00000000-0000-0000-0000-000000000001")

// Role is what an API key may do inside its tenant.
type Role string

// Roles.
const (
	RoleChat    Role = "chat"    // ask, pins, replies, its tenant's conversations
	RoleAuditor Role = "auditor" // read-only: conversations, messages, citations, exports
	RoleAdmin   Role = "admin"   // documents, keys, everything of its tenant
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleChat || r == RoleAuditor || r == RoleAdmin }

// Principal is who a request acts as: a key of a tenant with a role. The store reads it from the
// context and scopes every query to its tenant.
type Principal struct {
	Tenant uuid.UUID
	KeyID  uuid.UUID // zero when ragd serves openly, without keys
	Role   Role
	// All sees every tenant. Only maintenance sets it (the index following the chunk feed,
	// command-line tools); requests never do.
	All bool
}

type principalKey struct{}

// WithPrincipal returns ctx acting as p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalOf returns who ctx acts as: the default tenant, without a key, when nobody was set.
func PrincipalOf(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return Principal{Tenant: DefaultTenant}
}

// AllTenants returns ctx seeing every tenant, for maintenance work that is nobody's request.
func AllTenants(ctx context.Context) context.Context {
	p := PrincipalOf(ctx)
	p.All = true
	return WithPrincipal(ctx, p)
}

// Key is an API key as listed: never its secret.
type Key struct {
	ID         uuid.UUID
	Tenant     uuid.UUID
	TenantName string
	Name       string
	Role       Role
	Prefix     string
	CreatedAt  time.Time
	RevokedAt  *time.Time
}

// Error kinds of access.
var (
	// ErrUnauthenticated: no valid API key was given.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the key's role may not do this.
	ErrForbidden = errors.New("forbidden")
)
