package ingest

import (
	"net"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/ragd/ragd"
)

// trackingParams are query parameters that identify a campaign or a click, not a document.
var trackingParams = map[string]bool{
	"gclid": true, "dclid": true, "gbraid": true, "wbraid": true, "fbclid": true, "msclkid": true,
	"yclid": true, "igshid": true, "mc_cid": true, "mc_eid": true, "_ga": true, "_gl": true,
	"mkt_tok": true, "oly_anon_id": true, "oly_enc_id": true, "vero_id": true, "rb_clickid": true,
}

func isTracking(key string) bool {
	k := strings.ToLower(key)
	return trackingParams[k] || strings.HasPrefix(k, "utm_") || strings.HasPrefix(k, "pk_")
}

// CanonicalURL returns the form of a web address that identifies a document: scheme and host
// lower-cased, the scheme's default port dropped, the fragment, user info and tracking parameters
// removed, dot segments resolved, an empty path written as "/", and the query sorted. Two
// addresses of one page, such as a link shared with utm_ parameters and the bare one, get the
// same key, so re-ingesting either is a no-op.
func CanonicalURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", ragd.Invalidf("url", "%v", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", ragd.Invalidf("url", "%q: only http and https addresses can be ingested", raw)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", ragd.Invalidf("url", "%q has no host", raw)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	if port != "" {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	u.Host = host
	u.User = nil
	u.Fragment, u.RawFragment = "", ""

	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/" // a trailing slash can name a different resource: keep it
	}
	decoded, err := url.PathUnescape(clean)
	if err != nil {
		return "", ragd.Invalidf("url", "%q: %v", raw, err)
	}
	u.Path, u.RawPath = decoded, ""

	u.RawQuery = canonicalQuery(u.RawQuery)
	u.ForceQuery = false
	canon := u.String()
	if len(canon) > ragd.MaxSourceKeyBytes {
		return "", ragd.Invalidf("url", "is %d bytes, over the %d-byte limit", len(canon), ragd.MaxSourceKeyBytes)
	}
	return canon, nil
}

// canonicalQuery drops tracking parameters and sorts the rest by key, then value, keeping
// repeated keys. It works on the raw pairs so that encodings of values survive unchanged except
// for what url.Values normalizes.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type pair struct{ k, v string }
	var pairs []pair
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v // keep what cannot be decoded as it was written
		}
		if isTracking(dk) {
			continue
		}
		pairs = append(pairs, pair{dk, dv})
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.v))
	}
	return b.String()
}
