package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/dbtest"
)

// faultClient is a chat client that asks turn after turn in one conversation, each turn with an
// Idempotency-Key of its own, and retries a turn (same key) while ragd answers 503. It records
// every status it saw; the test checks them after the clients stop, as require may not run here.
type faultClient struct {
	id    int
	base  string
	conv  string
	turns []faultTurn // answered turns, in order
	// statuses counts the responses by status; noRetryAfter counts 503s without Retry-After.
	statuses     map[int]int
	noRetryAfter int
	other        []string // responses a client should never see
}

type faultTurn struct {
	message string
	resp    askResponse
}

// run asks until stop is closed, then finishes the turn it is on (a turn ends answered).
func (c *faultClient) run(ctx context.Context, stop <-chan struct{}, answered, unavailable *atomic.Int64) {
	for k := 1; ; k++ {
		select {
		case <-stop:
			return
		default:
		}
		msg := fmt.Sprintf("smoke alarms and gas leaks, client %d turn %d", c.id, k)
		body := map[string]any{"message": msg}
		if c.conv != "" {
			body["conversation_id"] = c.conv
		}
		raw, _ := json.Marshal(body)
		key := fmt.Sprintf("fault-%d-%d", c.id, k)
		for attempt := 0; ; attempt++ {
			if ctx.Err() != nil || attempt > 2000 {
				c.other = append(c.other, fmt.Sprintf("turn %d: gave up after %d attempts", k, attempt))
				return
			}
			status, header, data, err := c.post(ctx, raw, key)
			if err != nil {
				c.other = append(c.other, fmt.Sprintf("turn %d: %v", k, err))
				return
			}
			c.statuses[status]++
			if status == http.StatusOK {
				var r askResponse
				if err := json.Unmarshal(data, &r); err != nil {
					c.other = append(c.other, fmt.Sprintf("turn %d: %v: %s", k, err, data))
					return
				}
				c.conv = r.ConversationID
				c.turns = append(c.turns, faultTurn{message: msg, resp: r})
				answered.Add(1)
				break
			}
			if status != http.StatusServiceUnavailable {
				// 409: the first attempt with this key committed its turn but its response was not
				// kept (the database went away in between); anything else is a failure.
				c.other = append(c.other, fmt.Sprintf("turn %d: %d %s", k, status, data))
				return
			}
			unavailable.Add(1)
			if header.Get("Retry-After") == "" {
				c.noRetryAfter++
			}
			// A patient client waits Retry-After; this one retries sooner to keep the test short.
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (c *faultClient) post(ctx context.Context, body []byte, key string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/ask", bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data, err
}

// readyz returns /readyz's status and its Retry-After.
func readyz(ctx context.Context, base string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// PostgreSQL stopped and started again under concurrent /v1/ask load: while it is down clients
// get 503 with Retry-After (never a 500) and /readyz is not ready; then ragd answers again without
// being restarted, and every turn a client was answered is recorded exactly once with exactly the
// citations it was shown, and nothing else is.
func TestPostgresRestartUnderLoad(t *testing.T) {
	t.Parallel()
	cluster := dbtest.NewCluster(t)
	// The outage's hundreds of 503s would fill the test's output.
	b := setup(t, options{corpus: true, cluster: cluster, logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Minute)
	defer cancel()

	const clients = 8
	var answered, unavailable atomic.Int64
	stop := make(chan struct{})
	cs := make([]*faultClient, clients)
	var wg sync.WaitGroup
	for i := range cs {
		cs[i] = &faultClient{id: i, base: b.srv.URL, statuses: map[int]int{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs[i].run(ctx, stop, &answered, &unavailable)
		}()
	}
	// waitFor polls cond; the deadline bounds a hung test, it measures nothing.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				close(stop)
				wg.Wait()
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("turns before the fault", func() bool { return answered.Load() >= 2*clients })

	cluster.Stop(t)
	before := answered.Load()
	var downStatus int
	var downRetry string
	waitFor("/readyz to say not ready", func() bool {
		s, ra, err := readyz(ctx, b.srv.URL)
		require.NoError(t, err)
		downStatus, downRetry = s, ra
		return s == http.StatusServiceUnavailable
	})
	waitFor("clients to meet the outage", func() bool { return unavailable.Load() >= clients })
	cluster.Start(t)
	waitFor("/readyz to say ready", func() bool {
		s, _, err := readyz(ctx, b.srv.URL)
		require.NoError(t, err)
		return s == http.StatusOK
	})
	after := answered.Load()
	waitFor("turns after the restart", func() bool { return answered.Load() >= after+2*clients })
	close(stop)
	wg.Wait()

	require.Equal(t, http.StatusServiceUnavailable, downStatus)
	require.NotEmpty(t, downRetry, "/readyz's 503 says when to retry")
	statuses := map[int]int{}
	var turns int
	for _, c := range cs {
		require.Empty(t, c.other, "client %d saw only 200 and 503", c.id)
		require.Zero(t, c.noRetryAfter, "every 503 carries Retry-After")
		for s, n := range c.statuses {
			statuses[s] += n
		}
		turns += len(c.turns)
	}
	require.Positive(t, statuses[http.StatusServiceUnavailable])
	t.Logf("%d clients: %d turns answered (%d before the stop, %d after the restart); responses by status: %v",
		clients, turns, before, turns-int(after), statuses)

	// What PostgreSQL recorded: exactly the answered turns, each with the citations shown.
	conn := b.connect(t)
	defer conn.Close(b.ctx)
	var userMessages, citations int
	require.NoError(t, conn.QueryRow(b.ctx, "SELECT count(*) FROM messages WHERE role = 'user'").Scan(&userMessages))
	require.NoError(t, conn.QueryRow(b.ctx, "SELECT count(*) FROM message_citations").Scan(&citations))
	require.Equal(t, turns, userMessages, "no turn lost or recorded twice")
	var shown int
	for _, c := range cs {
		rows, err := conn.Query(b.ctx, `SELECT turn, content FROM messages
			WHERE conversation_id = $1 AND role = 'user' ORDER BY turn`, c.conv)
		require.NoError(t, err)
		var recorded []string
		for rows.Next() {
			var turn int
			var content string
			require.NoError(t, rows.Scan(&turn, &content))
			require.Equal(t, len(recorded)+1, turn, "turns are numbered without gaps")
			recorded = append(recorded, content)
		}
		require.NoError(t, rows.Err())
		var asked []string
		for i, turn := range c.turns {
			asked = append(asked, turn.message)
			require.Equal(t, i+1, turn.resp.Turn)
			var markers []string
			for _, s := range turn.resp.Sources {
				for _, f := range s.Facts {
					markers = append(markers, f.Marker)
				}
			}
			sort.Strings(markers)
			shown += len(markers)
			rows, err := conn.Query(b.ctx, "SELECT marker FROM message_citations WHERE message_id = $1 ORDER BY marker", turn.resp.MessageID)
			require.NoError(t, err)
			var stored []string
			for rows.Next() {
				var m string
				require.NoError(t, rows.Scan(&m))
				stored = append(stored, m)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, markers, stored, "client %d turn %d: the citations recorded are the ones shown", c.id, i+1)
		}
		require.Equal(t, asked, recorded, "client %d: the conversation holds its answered turns, once each, in order", c.id)
	}
	require.Equal(t, shown, citations, "no citation lost or recorded twice")
}
