package kg

import (
	"net/url"
	"path"
	"strings"
)

// canonicalLink returns the entity name of a link target, so that the spellings of one target
// ("HTTPS://Example.com:443/docs/#intro", "https://example.com/docs") share one name. It reports
// false for targets that name no document: in-page anchors, mailto:, javascript: and the like.
func canonicalLink(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw[0] == '#' {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
		u.Scheme = strings.ToLower(u.Scheme)
		u.User = nil
		host := strings.ToLower(u.Host)
		if u.Scheme == "http" {
			host = strings.TrimSuffix(host, ":80")
		} else {
			host = strings.TrimSuffix(host, ":443")
		}
		u.Host = host
		// "/docs/" and "/docs" are one page on nearly every server; the root path is dropped
		// the same way, so "https://example.com/" is "https://example.com".
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
		u.ForceQuery = false
		return u.String(), true
	case "file":
		if u.Path == "" {
			return "", false
		}
		return "file://" + path.Clean(u.Path), true
	case "":
		if u.Host != "" || u.Path == "" { // "//host/x" has an unknown scheme; "?q=1" no path
			return "", false
		}
		p := path.Clean(u.Path)
		if p == "." || p == "/" {
			return "", false
		}
		return p, true
	}
	return "", false
}
