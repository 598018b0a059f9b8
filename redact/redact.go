// Package redact keeps secrets out of what ragd shows: the user info of URLs (a password in
// --llm-url or --database-url), Authorization values and bearer tokens, and any secret ragd was
// configured with, in log lines and in any text about to leave the process.
package redact

import (
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces what is hidden.
const Mask = "REDACTED"

var (
	// userinfo is the "user:password@" of a URL, in any text.
	userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#@\s"']*@`)
	// authorization is the value of an Authorization header, scheme and credential.
	authorization = regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?)[^\r\n"']+`)
	// bearer is a credential after its scheme.
	bearer = regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{4,}`)
	// assigned is a value given to a key, token, password or secret: "api_key=...", "token: ...".
	assigned = regexp.MustCompile(`(?i)(\b(?:api[-_ ]?key|token|password|passwd|secret)["']?\s*[:=]\s*["']?)[^\s"',;&]{4,}`)
)

// String hides URL user info, Authorization values, bearer tokens, and each of secrets in s.
func String(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = authorization.ReplaceAllString(s, "${1}"+Mask)
	s = bearer.ReplaceAllString(s, "${1}"+Mask)
	return assigned.ReplaceAllString(s, "${1}"+Mask)
}

// URL returns raw with its user info hidden (and any secret among secrets), for logs.
func URL(raw string, secrets ...string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User(Mask)
		raw = u.String()
	}
	return String(raw, secrets...)
}

// Secrets returns the secrets of a configuration worth hiding: the passwords of the URLs among
// values, and the other values themselves (API keys).
func Secrets(values ...string) []string {
	var out []string
	for _, v := range values {
		u, err := url.Parse(v)
		switch {
		case v == "":
		case err == nil && u.Scheme != "" && u.Host != "" || err == nil && u.Scheme != "" && u.User != nil:
			if p, ok := u.User.Password(); ok && p != "" {
				out = append(out, p)
			}
		default:
			out = append(out, v)
		}
	}
	return out
}

// Handler passes records on to h with every string hidden as String hides it: the message and
// every attribute, in groups too.
type Handler struct {
	h       slog.Handler
	secrets []string
}

// NewHandler wraps h.
func NewHandler(h slog.Handler, secrets ...string) *Handler {
	return &Handler{h: h, secrets: secrets}
}

func (r *Handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, String(rec.Message, r.secrets...), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = r.attr(a)
	}
	return &Handler{h: r.h.WithAttrs(clean), secrets: r.secrets}
}

func (r *Handler) WithGroup(name string) slog.Handler {
	return &Handler{h: r.h.WithGroup(name), secrets: r.secrets}
}

func (r *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String(), r.secrets...))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = r.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, String(err.Error(), r.secrets...))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, String(s.String(), r.secrets...))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
