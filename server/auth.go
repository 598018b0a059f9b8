package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/request"
)

// Access says who may call the API.
type Access struct {
	// Open lets requests without a key act as the default tenant's admin while no key exists:
	// the single-user case. `ragd serve` sets it only on a loopback address (or --insecure).
	// Once a key exists, every request needs one.
	Open bool
}

// roles are the roles allowed on each route; a route missing here is admin-only.
// chat asks, pins, replies and reads its tenant's conversations; auditor only reads; admin does
// everything of its tenant (documents, jobs, keys).
var roles = map[string][]ragd.Role{
	"POST /v1/ask":                              {ragd.RoleChat, ragd.RoleAdmin},
	"GET /v1/conversations":                     {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
	"GET /v1/conversations/:id":                 {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
	"PATCH /v1/conversations/:id":               {ragd.RoleChat, ragd.RoleAdmin},
	"DELETE /v1/conversations/:id":              {ragd.RoleChat, ragd.RoleAdmin},
	"POST /v1/conversations/:id/messages":       {ragd.RoleChat, ragd.RoleAdmin},
	"GET /v1/conversations/:id/sources":         {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
	"PUT /v1/conversations/:id/pins/:doc_id":    {ragd.RoleChat, ragd.RoleAdmin},
	"DELETE /v1/conversations/:id/pins/:doc_id": {ragd.RoleChat, ragd.RoleAdmin},
	"GET /v1/messages/:id/citations":            {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
	"POST /v1/messages/:id/stop":                {ragd.RoleChat, ragd.RoleAdmin},
	"GET /v1/citations":                         {ragd.RoleAuditor, ragd.RoleAdmin},
	"POST /v1/messages/:id/feedback":            {ragd.RoleChat, ragd.RoleAdmin}, // the key that asked the turn (store)
	"GET /v1/feedback":                          {ragd.RoleAuditor, ragd.RoleAdmin},
	"GET /v1/documents":                         {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
	"GET /v1/documents/:id":                     {ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin},
}

// Allowed reports whether role may call the route "METHOD /path" (Echo's path pattern).
func Allowed(route string, role ragd.Role) bool {
	if role == ragd.RoleAdmin {
		return true
	}
	for _, r := range roles[route] {
		if r == role {
			return true
		}
	}
	return false
}

// openCache remembers for a moment whether any key was ever made, so open mode costs no query
// per request, and ends within that moment of the first key being made (at once when it is made
// through this process).
type openCache struct {
	mu      sync.Mutex
	checked time.Time
	keys    int
}

const openCacheTTL = 2 * time.Second

func (s *Server) keysExist(ctx context.Context) (bool, error) {
	s.open.mu.Lock()
	defer s.open.mu.Unlock()
	if time.Since(s.open.checked) < openCacheTTL {
		return s.open.keys > 0, nil
	}
	n, err := s.deps.Store.KeysMade(ctx)
	if err != nil {
		return true, err
	}
	s.open.keys, s.open.checked = n, time.Now()
	return n > 0, nil
}

// forgetKeys makes the next keyless request ask the store whether keys exist.
func (s *Server) forgetKeys() {
	s.open.mu.Lock()
	s.open.checked = time.Time{}
	s.open.mu.Unlock()
}

// authenticate makes every /v1 request act as the principal of its bearer key, checks the key's
// role against the route, and puts the principal in the request's context, which the store
// scopes every query by.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		ctx := r.Context()
		var p ragd.Principal
		auth := r.Header.Get(echo.HeaderAuthorization)
		switch scheme, secret, _ := strings.Cut(auth, " "); {
		case auth == "":
			exist, err := s.keysExist(ctx)
			if err != nil {
				return err
			}
			if !s.cfg.Access.Open || exist {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="ragd"`)
				// Worded so that no redaction of logged Authorization values eats the hint.
				return fmt.Errorf("send an API key in the Authorization header, as Bearer KEY: %w", ragd.ErrUnauthenticated)
			}
			p = ragd.Principal{Tenant: ragd.DefaultTenant, Role: ragd.RoleAdmin}
		case !strings.EqualFold(scheme, "Bearer"):
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="ragd"`)
			return fmt.Errorf("the Authorization scheme must be Bearer: %w", ragd.ErrUnauthenticated)
		default:
			var err error
			if p, err = s.deps.Store.Authenticate(ctx, strings.TrimSpace(secret)); err != nil {
				if errors.Is(err, ragd.ErrUnauthenticated) {
					c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="ragd", error="invalid_token"`)
					return fmt.Errorf("the API key is unknown or revoked: %w", ragd.ErrUnauthenticated)
				}
				return err
			}
		}
		if !Allowed(r.Method+" "+c.Path(), p.Role) {
			return fmt.Errorf("a key of role %s may not %s %s: %w", p.Role, r.Method, c.Path(), ragd.ErrForbidden)
		}
		c.SetRequest(r.WithContext(ragd.WithPrincipal(ctx, p)))
		return next(c)
	}
}

type keyJSON struct {
	ID        uuid.UUID  `json:"id"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Secret    string     `json:"secret,omitempty"`
}

func keyOf(k ragd.Key) keyJSON {
	return keyJSON{ID: k.ID, Tenant: k.TenantName, Name: k.Name, Role: string(k.Role), Prefix: k.Prefix,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

// createKey makes a key of the caller's tenant; its secret is in this response only.
func (s *Server) createKey(c echo.Context) error {
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	req, err := request.DecodeKey(raw)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	k, secret, err := s.deps.Store.CreateKey(ctx, ragd.Role(req.Role), req.Name)
	if err != nil {
		return err
	}
	s.forgetKeys()
	s.deps.Logger.InfoContext(ctx, "API key created", slog.String("key", k.ID.String()), slog.String("role", string(k.Role)),
		slog.String("by", ragd.PrincipalOf(ctx).KeyID.String()))
	out := keyOf(*k)
	out.Secret = secret
	return c.JSON(http.StatusCreated, out)
}

func (s *Server) listKeys(c echo.Context) error {
	ks, err := s.deps.Store.Keys(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]keyJSON, len(ks))
	for i, k := range ks {
		out[i] = keyOf(k)
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": out})
}

func (s *Server) revokeKey(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.deps.Store.RevokeKey(c.Request().Context(), id); err != nil {
		return err
	}
	s.forgetKeys()
	return c.NoContent(http.StatusNoContent)
}
