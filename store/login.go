package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Login is the PostgreSQL login a store's pool works as, and whether it could get past what keeps
// tenants apart and citations append-only.
type Login struct {
	User string
	// Privileged lists what the login could do that ragd_app cannot: be a superuser, bypass
	// row-level security, or own ragd's tables (or become, by SET ROLE, a role that does or a
	// superuser). Empty for a login that is only a member of ragd_app.
	Privileged []string
}

// Login reports the pool's login (session_user: the role it logged in as, whatever role the
// session has switched to since).
func (s *Store) Login(ctx context.Context) (Login, error) {
	var l Login
	var super, bypass, becomesSuper, owns bool
	err := s.db.QueryRow(ctx, `
		SELECT session_user::text, r.rolsuper, r.rolbypassrls,
		       EXISTS (SELECT FROM pg_roles o WHERE (o.rolsuper OR o.rolbypassrls) AND o.rolname <> session_user
		               AND pg_has_role(session_user, o.oid, 'MEMBER')),
		       EXISTS (SELECT FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema())
		               AND c.relkind IN ('r', 'p') AND pg_has_role(session_user, c.relowner, 'MEMBER'))
		FROM pg_roles r WHERE r.rolname = session_user`).Scan(&l.User, &super, &bypass, &becomesSuper, &owns)
	if err != nil {
		return l, fmt.Errorf("store: reading the login: %w", err)
	}
	for _, p := range []struct {
		is   bool
		what string
	}{{super, "is a superuser"}, {bypass, "bypasses row-level security"}, {becomesSuper, "may SET ROLE to a superuser or a role that bypasses row-level security"},
		{owns, "owns ragd's tables (or may SET ROLE to their owner)"}} {
		if p.is {
			l.Privileged = append(l.Privileged, p.what)
		}
	}
	return l, nil
}

// grantApp makes login a member of ragd_app unless it is one, on the owner's connection.
func grantApp(ctx context.Context, conn *pgx.Conn, login string) error {
	var member bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_auth_members m
		JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
		WHERE g.rolname = $1 AND u.rolname = $2)`, AppRole, login).Scan(&member)
	if err != nil {
		return fmt.Errorf("store: reading the roles of %s: %w", login, err)
	}
	if member {
		return nil
	}
	if _, err := conn.Exec(ctx, "GRANT "+AppRole+" TO "+pgx.Identifier{login}.Sanitize()); err != nil {
		return fmt.Errorf("store: granting %s to the login %s (an administrator can: GRANT %s TO %s): %w",
			AppRole, login, AppRole, login, err)
	}
	return nil
}

// cannotMigrate explains a migration refused for lack of privilege: the login is ragd's
// unprivileged one, not the tables' owner; or it is the owner, but may not create the role
// ragd_app or grant it (to itself, and then to the login ragd serves as).
func cannotMigrate(err error, user string) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || (pgErr.Code != "42501" && !strings.HasPrefix(pgErr.Code, "28")) {
		return ""
	}
	if pgErr.Code == "42501" && strings.Contains(pgErr.Message, "role") {
		return fmt.Sprintf(" (the login %[1]s may not create or grant the role %[2]s: give it CREATEROLE (ALTER ROLE %[1]s CREATEROLE), "+
			"or have an administrator run CREATE ROLE %[2]s NOLOGIN; GRANT %[2]s TO %[1]s WITH ADMIN OPTION)", user, AppRole)
	}
	return fmt.Sprintf(" (the login %s may not migrate: migrate as the owner of ragd's tables, with its URL as --migrate-database-url or with `ragd migrate --database-url OWNER_URL`)", user)
}
