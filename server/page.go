package server

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// Lists of conversations and documents come in pages, newest first, by keyset: a page's
// next_cursor names its last row, and the next page starts strictly after it. The cursor is
// opaque to clients.

const (
	defaultPage = 20
	maxPage     = 100
)

func encodeCursor(at time.Time, id uuid.UUID) string {
	raw := strconv.FormatInt(at.UnixMicro(), 10) + "." + id.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(s string) (*ragd.Keyset, error) {
	bad := ragd.Invalidf("cursor", "%q is not a cursor this server gave", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return nil, bad
	}
	n, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return nil, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, bad
	}
	return &ragd.Keyset{At: time.UnixMicro(n).UTC(), ID: u}, nil
}

// pageQuery reads limit and cursor. It asks the store for one row more than the limit, which
// tells whether a next page exists.
func pageQuery(c echo.Context) (ragd.Page, int, error) {
	limit := defaultPage
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			return ragd.Page{}, 0, ragd.Invalidf("limit", "must be 1..%d", maxPage)
		}
		limit = n
	}
	p := ragd.Page{Limit: limit + 1}
	if v := c.QueryParam("cursor"); v != "" {
		k, err := decodeCursor(v)
		if err != nil {
			return ragd.Page{}, 0, err
		}
		p.After = k
	}
	return p, limit, nil
}

// nextCursor trims a page read with pageQuery to limit rows and returns the cursor of the next
// page, or "" when this is the last.
func nextCursor[T any](rows []T, limit int, key func(T) (time.Time, uuid.UUID)) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, encodeCursor(key(rows[limit-1]))
}
