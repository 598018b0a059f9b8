package main

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
	"github.com/ragd/ragd/store"
	"github.com/ragd/ragd/token"
)

// warmChildEnv makes TestServeWarmsBeforeReady run its body in a process of its own.
const warmChildEnv = "RAGD_TEST_WARM_CHILD"

// firstTurnAllocBound is far above what a turn's classification and token count allocate with
// the models loaded (0.1-0.3 MB) and far below what loading them does (tens of MB: the models'
// JSON, the word-vector table, the BPE ranks).
const firstTurnAllocBound = 2 << 20

// A server that answers /readyz has loaded what every turn uses: the first classification and
// token count after it allocate as little as any later one. The models are parsed once per
// process (sync.OnceValue), and other tests of this package load them, so the server runs in a
// fresh process: this test binary again, running only this test's body.
func TestServeWarmsBeforeReady(t *testing.T) {
	if os.Getenv(warmChildEnv) == "1" {
		serveThenClassify(t)
		return
	}
	dbtest.ServerURL(t) // fail here, not in the child, when PostgreSQL is missing
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeWarmsBeforeReady$", "-test.v", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), warmChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child:\n%s", out)
	i := strings.Index(string(out), "allocated")
	require.GreaterOrEqual(t, i, 0, "the child ran the body:\n%s", out)
	t.Log("the child:", strings.SplitN(string(out[i:]), "\n", 2)[0])
}

// serveThenClassify starts `ragd serve` in this process, waits until it is ready, then runs a
// turn's classifiers and token count on text the warm-up never saw, and checks what that
// allocated.
func serveThenClassify(t *testing.T) {
	addr, cli := serveOnNewDatabase(t)
	// The default tenant holds a document, another tenant none: only the first has a gazetteer
	// to warm.
	st, err := store.Open(t.Context(), store.Config{URL: cli.DatabaseURL, OwnerURL: cli.MigrateDatabaseURL, EmbeddingDim: dbtest.Dim, Migrate: true})
	require.NoError(t, err)
	_, err = st.SaveVersions(ragd.WithPrincipal(t.Context(), ragd.Principal{Tenant: ragd.DefaultTenant}), []ragd.NewVersion{{
		SourceKey: "retry", Format: "text", Title: "Billing worker retry policy", ContentHash: "h", Bytes: 10,
		Chunks: []ragd.Chunk{{Text: "The billing worker retries three times.", Tokens: 7}}}})
	require.NoError(t, err)
	_, err = st.EnsureTenant(t.Context(), "idle")
	require.NoError(t, err)
	st.Close()
	lines, _ := startServe(t, cli, addr)

	prev := "Which retry policy does the billing worker use?"
	text := "Keep the timeout under 5 seconds. It now crashes with: KeyError: 'invoice_id'"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	turnIntent{}.Classify(ask.IntentInput{Text: text, History: []string{prev}})
	mode.Classify(text, prev)
	invariant.Detect(text)
	token.Count(prev + " " + text)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("the first classification and token count after ready allocated %d bytes", allocated)
	require.Less(t, allocated, uint64(firstTurnAllocBound), "serve did not load the classifiers or the token counter before it was ready")

	// Then, in the background, the gazetteer of the one tenant with documents.
	for line := range lines {
		require.NotContains(t, line, "gazetteer failed")
		if strings.Contains(line, "built the focus gazetteers") {
			require.Contains(t, line, "tenants=1")
			break
		}
	}
}

// logLines passes the server's log on to out, and each line (one record) to lines.
type logLines struct {
	out   io.Writer
	lines chan string
}

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l.lines <- string(p):
	default: // nobody reads them any more: the server's log must not block
	}
	return l.out.Write(p)
}
