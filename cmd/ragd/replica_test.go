package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// runMainEnv makes the test binary run ragd's main instead of the tests, so a test can start
// real ragd processes without building the binary separately.
const runMainEnv = "RAGD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(dbtest.Main(m))
}

// ragdCmd runs ragd (this test binary as main) with args against the database at url, as ragd
// is meant to run on an external database: logged in as a login that is only a member of
// ragd_app, url's owner migrating.
func ragdCmd(t *testing.T, url string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--database-url", dbtest.AppURL(t, url), "--migrate-database-url", url,
		"--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// replica is one `ragd serve` process with its own BM25 index.
type replica struct {
	name string
	url  string
	// key is sent as the bearer of every request when set.
	key string
	// stop stops the process (and is called again, harmlessly, when the test ends).
	stop func()
}

// startReplica starts `ragd serve` on a free loopback port with its own data directory (so its
// own BM25 index) and stops it when the test ends.
func startReplica(t *testing.T, name, dbURL string) *replica {
	t.Helper()
	return startReplicaIn(t, name, dbURL, t.TempDir())
}

// startReplicaIn is startReplica with the data directory given.
func startReplicaIn(t *testing.T, name, dbURL, dataDir string) *replica {
	t.Helper()
	cmd := ragdCmd(t, dbURL, "--data-dir", dataDir, "--listen", "127.0.0.1:0", "serve")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ragd serving" && !sent {
				addr <- line.Addr
				sent = true
			}
			if testing.Verbose() {
				t.Logf("%s: %s", name, sc.Text())
			}
		}
		if !sent {
			close(addr)
		}
	}()
	select {
	case a, ok := <-addr:
		require.True(t, ok, "%s exited before serving", name)
		return &replica{name: name, url: "http://" + a, stop: stop}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not start serving", name)
	}
	return nil
}

func (r *replica) do(t *testing.T, method, path string, body any) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, "%s %s on %s: %s", method, path, r.name, out)
	return out
}

type replicaSource struct {
	DocID  string `json:"doc_id"`
	Letter string `json:"letter"`
}

type replicaTurn struct {
	ConversationID string          `json:"conversation_id"`
	Turn           int             `json:"turn"`
	Sources        []replicaSource `json:"sources"`
}

func (r *replica) ask(t *testing.T, conv, message string) replicaTurn {
	t.Helper()
	req := map[string]any{"message": message}
	if conv != "" {
		req["conversation_id"] = conv
	}
	var turn replicaTurn
	require.NoError(t, json.Unmarshal(r.do(t, "POST", "/v1/ask", req), &turn))
	return turn
}

type carried struct {
	DocID         string  `json:"doc_id"`
	Letter        string  `json:"letter"`
	CarryScore    float64 `json:"carry_score"`
	Carried       bool    `json:"carried"`
	InactiveTurns int     `json:"inactive_turns"`
	LastTurn      int     `json:"last_turn"`
}

func (r *replica) sources(t *testing.T, conv string) []carried {
	t.Helper()
	var out struct {
		Sources []carried `json:"sources"`
	}
	require.NoError(t, json.Unmarshal(r.do(t, "GET", "/v1/conversations/"+conv+"/sources", nil), &out))
	sort.Slice(out.Sources, func(i, j int) bool { return out.Sources[i].DocID < out.Sources[j].DocID })
	return out.Sources
}

// TestReplicasShareOneDatabase runs two ragd processes on one PostgreSQL, each with its own BM25
// index following the store. A conversation whose turns alternate between them keeps one
// numbering, one set of letters and one carry state; a document ingested through one becomes
// searchable on the other, and how long that takes is logged as a figure (never asserted: the
// test only fails if it never happens).
func TestReplicasShareOneDatabase(t *testing.T) {
	dbURL := dbtest.NewDatabase(t)
	corpus, err := filepath.Abs("../../testdata/corpus")
	require.NoError(t, err)
	ingest := ragdCmd(t, dbURL, "--data-dir", t.TempDir(), "ingest", corpus)
	out, err := ingest.CombinedOutput()
	require.NoError(t, err, "%s", out)

	a := startReplica(t, "replica A", dbURL)
	b := startReplica(t, "replica B", dbURL)
	replicas := []*replica{a, b}

	questions := []string{
		"What should I do if I smell gas after an earthquake?",
		"Is it the same after a flood?",
		"How do I treat a burn?",
		"What about the smoke alarm batteries?",
		"And during a power outage, what should I keep in the fridge?",
		"Back to earthquakes: where should I take cover?",
	}
	var conv string
	letters := map[string]string{} // doc -> letter, as first handed out
	for i, q := range questions {
		r := replicas[i%2]
		turn := r.ask(t, conv, q)
		if conv == "" {
			conv = turn.ConversationID
		}
		require.Equal(t, conv, turn.ConversationID)
		require.Equal(t, i+1, turn.Turn, "turn numbers run on across replicas")
		require.NotEmpty(t, turn.Sources, "%s found nothing for %q", r.name, q)
		for _, s := range turn.Sources {
			if l, ok := letters[s.DocID]; ok {
				require.Equal(t, l, s.Letter, "a document keeps its letter whichever replica answers")
			} else {
				require.NotContains(t, slices.Collect(maps.Values(letters)), s.Letter, "a new document gets a new letter")
				letters[s.DocID] = s.Letter
			}
		}
		// Both replicas read the same carry state after every turn.
		sa, sb := a.sources(t, conv), b.sources(t, conv)
		require.Equal(t, sa, sb)
		for _, s := range sa {
			require.Equal(t, letters[s.DocID], s.Letter)
		}
	}
	require.GreaterOrEqual(t, len(letters), 3, "the conversation found several documents")

	// Replication lag: documents posted to one replica, searched for on the other.
	const docs = 20
	var lags []time.Duration
	for i := range docs {
		from, to := replicas[i%2], replicas[(i+1)%2]
		word := fmt.Sprintf("zq%dx%dreplica", time.Now().UnixNano()%1_000_000, i)
		text := fmt.Sprintf("The %s procedure is documented here for the replica test. Follow the %s steps in order.", word, word)
		var posted struct {
			DocID string `json:"doc_id"`
		}
		require.NoError(t, json.Unmarshal(from.do(t, "POST", "/v1/documents", map[string]any{"text": text, "title": "Replica " + word, "format": "text"}), &posted))
		start := time.Now()
		for {
			turn := to.ask(t, "", "what is the "+word+" procedure")
			if slices.ContainsFunc(turn.Sources, func(s replicaSource) bool { return s.DocID == posted.DocID }) {
				break
			}
			require.Less(t, time.Since(start), time.Minute, "document %s posted to %s never became searchable on %s", posted.DocID, from.name, to.name)
			time.Sleep(2 * time.Millisecond)
		}
		lags = append(lags, time.Since(start))
	}
	slices.Sort(lags)
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1)+0.5)] }
	t.Logf("replication lag over %d documents (posted to one replica until searchable on the other, polled with /v1/ask): p50 %s, p95 %s, max %s",
		len(lags), p(0.5).Round(time.Microsecond), p(0.95).Round(time.Microsecond), lags[len(lags)-1].Round(time.Microsecond))
	if path := os.Getenv("RAGD_REPLICA_LAG_JSON"); path != "" {
		b, _ := json.Marshal(map[string]any{"documents": len(lags), "p50_ms": ms(p(0.5)), "p95_ms": ms(p(0.95)), "max_ms": ms(lags[len(lags)-1])})
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
