package ingest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/ragd/ragd"
)

// FetchConfig says what URL ingest may reach. By default only public internet addresses: a
// client could otherwise make ragd read its own host, its network or a cloud metadata service,
// and read the answer back through search.
type FetchConfig struct {
	// Allow lists networks that may be fetched although they are not public (an intranet wiki,
	// say). Empty allows public addresses only.
	Allow []netip.Prefix
	// Timeout bounds one fetch, redirects included; 0 means 30 s.
	Timeout time.Duration
	// MaxRedirects is how many redirects a fetch follows; 0 means 5.
	MaxRedirects int
	// Resolver resolves host names; nil is the system's. Tests give one that answers what they
	// want, to show that the address dialled is checked, not the name.
	Resolver *net.Resolver
}

// ErrFetch is the one error of a URL that cannot be fetched, whatever the reason: a refused
// address, a closed or filtered port, a failed handshake or a timeout all read the same, so the
// error tells a caller nothing about the network behind ragd. The cause goes to the log.
var ErrFetch = errors.New("could not be fetched: the address is unreachable or not a public internet address")

// fetchError keeps the cause for the log while its message is only ErrFetch's.
type fetchError struct{ cause error }

func (e *fetchError) Error() string { return "url: " + ErrFetch.Error() }
func (e *fetchError) Unwrap() []error {
	return []error{ErrFetch, ragd.ErrInvalid}
}

// Cause is the underlying failure, for server-side logs only.
func (e *fetchError) Cause() error { return e.cause }

// errRefused is a dial refused by policy; it never leaves this package except inside fetchError.
var errRefused = errors.New("address refused by the ingest policy")

// notPublic are the networks that are not the public internet beyond what netip's predicates
// cover (loopback, private, link-local, multicast, unspecified).
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (and Alibaba's metadata address)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// embedded are IPv6 ranges that carry an IPv4 address a gateway may forward to.
var embedded = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // local NAT64
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4
}

// Public reports whether ip is an address of the public internet.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	for _, e := range embedded {
		if e.prefix.Contains(ip) {
			b := ip.As16()
			if !Public(netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))) {
				return false
			}
		}
	}
	return true
}

// allowed reports whether a connection to ip may be made.
func (c FetchConfig) allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range c.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return Public(ip)
}

// Client returns an HTTP client that checks every address it connects to, after name
// resolution, on every redirect and every connection: a name that resolves to a private address,
// or starts to after a first check (DNS rebinding), is refused when it is dialled. Proxies from
// the environment are not used, since the proxy's address would be the one checked.
func (c FetchConfig) Client() *http.Client {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	maxRedirects := c.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = 5
	}
	d := &net.Dialer{
		Timeout:  10 * time.Second,
		Resolver: c.Resolver,
		// Control runs on the socket about to connect, with the IP address chosen: the check
		// cannot be raced by a second resolution.
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !c.allowed(ap.Addr()) {
				return errRefused
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %s address", req.URL.Scheme)
			}
			return nil
		}}
}

// Fetch downloads a web page or file through client (nil: FetchConfig{}.Client(), public
// addresses only). Its source key is the canonical form of the address the server finally
// answered from, so following a redirect does not make a second document. Every failure to reach
// the address is ErrFetch, the same whatever happened.
func Fetch(ctx context.Context, client *http.Client, raw string, maxBytes int64) (Source, error) {
	canon, err := CanonicalURL(raw)
	if err != nil {
		return Source{Name: raw}, err
	}
	if client == nil {
		client = FetchConfig{}.Client()
	}
	// The canonical address has no user info: credentials in a URL are neither sent nor echoed.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, canon, nil)
	if err != nil {
		return Source{Name: canon}, ragd.Invalidf("url", "%v", err)
	}
	req.Header.Set("User-Agent", "ragd (+https://github.com/ragd/ragd)")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Source{Name: canon}, ctx.Err()
		}
		return Source{Name: canon}, &fetchError{cause: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Source{Name: canon}, ragd.Invalidf("url", "%s answered %s", canon, resp.Status)
	}
	data, err := readLimited(resp.Body, maxBytes)
	if err != nil {
		if errors.Is(err, ragd.ErrInvalid) {
			return Source{Name: canon}, err
		}
		return Source{Name: canon}, &fetchError{cause: err}
	}
	final, err := CanonicalURL(resp.Request.URL.String())
	if err != nil {
		return Source{Name: canon}, err
	}
	return Source{Key: final, Name: final, ContentType: resp.Header.Get("Content-Type"), Data: data, URL: final}, nil
}
