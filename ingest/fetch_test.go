package ingest_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
)

func TestPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"93.184.216.34":            true,
		"2606:2800:220:1::":        true,
		"127.0.0.1":                false,
		"127.9.9.9":                false,
		"::1":                      false,
		"10.1.2.3":                 false,
		"172.16.0.1":               false,
		"192.168.1.1":              false,
		"169.254.169.254":          false, // cloud metadata
		"fd00:ec2::254":            false, // AWS metadata over IPv6
		"100.100.100.200":          false, // Alibaba metadata, in CGNAT
		"100.64.0.1":               false,
		"0.0.0.0":                  false,
		"::":                       false,
		"224.0.0.1":                false,
		"ff02::1":                  false,
		"fe80::1":                  false,
		"::ffff:127.0.0.1":         false, // IPv4-mapped
		"::ffff:10.0.0.1":          false,
		"::127.0.0.1":              false, // IPv4-compatible
		"64:ff9b::7f00:1":          false, // NAT64 of 127.0.0.1
		"64:ff9b::5db8:d822":       true,  // NAT64 of a public address
		"2002:7f00:1::":            false, // 6to4 of 127.0.0.1
		"255.255.255.255":          false,
		"198.18.0.1":               false,
		"2001:db8::1":              false,
		"2a00:1450:4001:81c::200e": true,
	} {
		require.Equal(t, want, ingest.Public(netip.MustParseAddr(addr)), addr)
	}
}

// fakeDNS answers every A question with addr, as a DNS server under an attacker's control would.
func fakeDNS(t *testing.T, addr netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0},
					dnsmessage.AResource{A: addr.As4()})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// Every way of pointing URL ingest at the host or its network is refused with the same error,
// and the internal service never sees a request.
func TestFetchRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	secret := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("internal secret"))
	})
	// An internal service on 127.0.0.2 (loopback, the whole of 127/8 is the host).
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	internal := httptest.NewUnstartedServer(secret)
	internal.Listener = ln
	internal.Start()
	defer internal.Close()
	internalPort := netip.MustParseAddrPort(ln.Addr().String()).Port()

	// A "public" site (on 127.0.0.1, allowed for the test only) that redirects inward.
	public := httptest.NewServer(http.RedirectHandler(internal.URL+"/admin", http.StatusFound))
	defer public.Close()
	allowPublic := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

	v6, err := net.Listen("tcp", "[::1]:0")
	v6URL := ""
	if err == nil { // a host without IPv6 refuses all the same, with nothing listening
		internal6 := httptest.NewUnstartedServer(secret)
		internal6.Listener = v6
		internal6.Start()
		defer internal6.Close()
		v6URL = internal6.URL
	} else {
		v6URL = "http://[::1]:9/"
	}

	cases := map[string]struct {
		url string
		cfg ingest.FetchConfig
	}{
		"loopback":                 {internal.URL + "/", ingest.FetchConfig{}},
		"loopback, other port":     {"http://127.0.0.1:1/", ingest.FetchConfig{}},
		"private":                  {"http://10.0.0.1/", ingest.FetchConfig{}},
		"link-local (metadata)":    {"http://169.254.169.254/latest/meta-data/", ingest.FetchConfig{}},
		"IPv6 loopback":            {v6URL, ingest.FetchConfig{}},
		"IPv4-mapped IPv6":         {"http://[::ffff:127.0.0.2]:" + itoa(internalPort) + "/", ingest.FetchConfig{}},
		"redirect to loopback":     {public.URL + "/", ingest.FetchConfig{Allow: allowPublic}},
		"DNS name to loopback":     {"http://intranet.example.test:" + itoa(internalPort) + "/", ingest.FetchConfig{Resolver: fakeDNS(t, netip.MustParseAddr("127.0.0.2"))}},
		"DNS name to metadata":     {"http://meta.example.test/", ingest.FetchConfig{Resolver: fakeDNS(t, netip.MustParseAddr("169.254.169.254"))}},
		"unspecified":              {"http://0.0.0.0:" + itoa(internalPort) + "/", ingest.FetchConfig{}},
		"CGNAT":                    {"http://100.64.1.1/", ingest.FetchConfig{}},
		"decimal loopback literal": {"http://2130706434:" + itoa(internalPort) + "/", ingest.FetchConfig{}},
	}
	var first string
	for name, tc := range cases {
		_, err := ingest.Fetch(context.Background(), tc.cfg.Client(), tc.url, 1<<20)
		require.ErrorIs(t, err, ingest.ErrFetch, name)
		require.ErrorIs(t, err, ragd.ErrInvalid, name)
		if first == "" {
			first = err.Error()
		}
		require.Equal(t, first, err.Error(), "%s: every refusal reads the same", name)
		require.NotContains(t, err.Error(), itoa(internalPort), name)
	}
	require.Zero(t, hits.Load(), "the internal service was never reached")

	// The allow-list opens an intranet on purpose.
	src, err := ingest.Fetch(context.Background(),
		ingest.FetchConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.Client(), internal.URL+"/", 1<<20)
	require.NoError(t, err)
	require.Equal(t, "internal secret", string(src.Data))
}

func itoa(p uint16) string {
	return netip.AddrPortFrom(netip.IPv4Unspecified(), p).String()[len("0.0.0.0:"):]
}
