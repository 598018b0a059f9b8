package server_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd/eval"
	"github.com/ragd/ragd/server"
)

type fact struct {
	Marker string `json:"marker"`
	Text   string `json:"text"`
}

type source struct {
	Rank     int      `json:"rank"`
	Letter   string   `json:"letter"`
	DocID    string   `json:"doc_id"`
	ChunkID  int64    `json:"chunk_id"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Date     string   `json:"date"`
	DateKind string   `json:"date_kind"`
	Origins  []string `json:"origins"`
	Facts    []fact   `json:"facts"`
	// Referred is the words of the turn that referred to the source ("the second one").
	Referred string `json:"referred"`
}

type contextResponse struct {
	Mode       string `json:"mode"`
	Arm        string `json:"arm"`
	Treated    bool   `json:"treated"`
	UsedTokens int    `json:"used_tokens"`
	Sections   []struct {
		Name   string   `json:"name"`
		Budget int      `json:"budget_tokens"`
		Used   int      `json:"used_tokens"`
		Items  int      `json:"items"`
		Cut    []string `json:"cut"`
	} `json:"sections"`
	Invariants []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"invariants"`
	Breach   []any  `json:"breach"`
	Fallback bool   `json:"fallback"`
	Text     string `json:"text"`
}

type askResponse struct {
	ConversationID string `json:"conversation_id"`
	Turn           int    `json:"turn"`
	MessageID      string `json:"message_id"`
	UserMessageID  string `json:"user_message_id"`
	Intent         struct {
		Label      string  `json:"label"`
		Confidence float64 `json:"confidence"`
	} `json:"turn_intent"`
	Mode struct {
		Label      string  `json:"label"`
		Confidence float64 `json:"confidence"`
		Source     string  `json:"source"`
	} `json:"mode"`
	Goal struct {
		New        bool    `json:"new"`
		Confidence float64 `json:"confidence"`
		Reason     string  `json:"reason"`
	} `json:"goal"`
	Context   contextResponse `json:"context"`
	Retrieval struct {
		Lists    []string          `json:"lists"`
		Reranked bool              `json:"reranked"`
		Skipped  map[string]string `json:"skipped"`
	} `json:"retrieval"`
	Sources  []source `json:"sources"`
	Answer   string   `json:"answer"`
	Phantoms []string `json:"phantom_markers"`
}

type citation struct {
	ID       int64  `json:"id"`
	Marker   string `json:"marker"`
	Fact     string `json:"fact"`
	Document struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
		Title   string `json:"title"`
	} `json:"document"`
	Chunk struct {
		ID   int64  `json:"id"`
		Text string `json:"text"`
	} `json:"chunk"`
}

var markerRE = regexp.MustCompile(`^([A-Z]+)([1-9][0-9]*)$`)

// checkTurn checks what every turn must satisfy and returns its markers.
func checkTurn(t *testing.T, r askResponse) []string {
	t.Helper()
	require.NotEmpty(t, r.Sources)
	var markers []string
	for i, s := range r.Sources {
		require.Equal(t, i+1, s.Rank)
		require.NotEmpty(t, s.Letter)
		require.NotEmpty(t, s.Facts, "every source has facts")
		require.LessOrEqual(t, len(s.Facts), 2, "two key sentences per source")
		require.NotEmpty(t, s.Date)
		for _, f := range s.Facts {
			m := markerRE.FindStringSubmatch(f.Marker)
			require.NotNil(t, m, f.Marker)
			require.Equal(t, s.Letter, m[1], "a fact's marker carries its document's letter")
			require.Contains(t, s.Text, f.Text, "facts are sentences of the cited passage")
			require.Contains(t, r.Answer, "["+f.Marker+"]", "the extractive answer shows every fact")
			markers = append(markers, f.Marker)
		}
	}
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(markers))), len(markers), "markers are unique in a message")
	return markers
}

func (b *testBundle) citationsOf(t *testing.T, msg string) []citation {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/messages/"+msg+"/citations", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return decode[struct {
		Citations []citation `json:"citations"`
	}](t, body).Citations
}

func markersOf(cs []citation) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Marker
	}
	sort.Strings(out)
	return out
}

func TestAskTwoTurnsAndAudit(t *testing.T) {
	t.Parallel()
	b := setup(t, options{models: true, corpus: true})

	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "What should I do if I smell gas after an earthquake?"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	one := decode[askResponse](t, body)
	require.Equal(t, 1, one.Turn)
	require.Equal(t, []string{"bm25", "vector"}, one.Retrieval.Lists)
	require.True(t, one.Retrieval.Reranked)
	markers1 := checkTurn(t, one)
	require.Equal(t, "A", one.Sources[0].Letter, "the first document of a conversation is A")
	var gas bool
	for _, s := range one.Sources {
		for _, f := range s.Facts {
			gas = gas || strings.Contains(f.Text, "smell gas")
		}
	}
	require.True(t, gas, "the fact sheet picks the sentence about gas, whichever passage it sits in")

	// The auditor reads back exactly the markers the chat UI was given, with the passages.
	cites := b.citationsOf(t, one.MessageID)
	require.Equal(t, slices.Sorted(slices.Values(markers1)), markersOf(cites))
	for _, c := range cites {
		require.Contains(t, c.Chunk.Text, c.Fact)
		require.Equal(t, 1, c.Document.Version)
	}

	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": one.ConversationID, "message": "Is it the same for floods?"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	two := decode[askResponse](t, body)
	require.Equal(t, one.ConversationID, two.ConversationID)
	require.Equal(t, 2, two.Turn)
	markers2 := checkTurn(t, two)
	require.Equal(t, slices.Sorted(slices.Values(markers2)), markersOf(b.citationsOf(t, two.MessageID)))

	letters := map[string]string{}
	for _, s := range one.Sources {
		letters[s.DocID] = s.Letter
	}
	used := map[string]bool{}
	for _, l := range letters {
		used[l] = true
	}
	again := 0
	for _, s := range two.Sources {
		if l, ok := letters[s.DocID]; ok {
			require.Equal(t, l, s.Letter, "a document keeps its letter for the whole conversation")
			again++
		} else {
			require.False(t, used[s.Letter], "a new document gets a letter no other document had")
		}
	}
	require.Positive(t, again, "some documents of turn 1 came back in turn 2")

	resp, body = b.do(t, "GET", "/v1/conversations/"+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	conv := decode[struct {
		Turn     int `json:"turn"`
		Messages []struct {
			Role   string `json:"role"`
			Answer string `json:"answer"`
		} `json:"messages"`
		Sources []struct {
			Letter string `json:"letter"`
		} `json:"sources"`
	}](t, body)
	require.Equal(t, 2, conv.Turn)
	require.Len(t, conv.Messages, 4)
	require.Equal(t, "user", conv.Messages[0].Role)
	require.Equal(t, one.Answer, conv.Messages[1].Answer)

	// The chat UI records the reply it showed, once.
	resp, body = b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages", map[string]any{"content": "Open the windows and leave [A1]."})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	require.Equal(t, two.MessageID, decode[struct {
		ID string `json:"id"`
	}](t, body).ID, "the reply goes to the latest turn")
	resp, body = b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages", map[string]any{"content": "again"})
	require.Equal(t, http.StatusConflict, resp.StatusCode, "%s", body)
	resp, _ = b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages", map[string]any{"content": "for turn one", "message_id": one.MessageID})
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	// Exports for auditors: every citation of the conversation, in three formats.
	total := len(markers1) + len(markers2)
	resp, body = b.do(t, "GET", "/v1/citations?conversation_id="+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, decode[struct {
		Citations []citation `json:"citations"`
	}](t, body).Citations, total)
	resp, body = b.do(t, "GET", "/v1/citations?conversation_id="+one.ConversationID+"&limit=2", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := decode[struct {
		Citations []citation `json:"citations"`
		NextAfter int64      `json:"next_after"`
	}](t, body)
	require.Len(t, page.Citations, 2)
	require.Equal(t, page.Citations[1].ID, page.NextAfter)

	resp, body = b.do(t, "GET", "/v1/citations?format=jsonl&conversation_id="+one.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
	lines := 0
	for sc := bufio.NewScanner(bytes.NewReader(body)); sc.Scan(); lines++ {
		decode[citation](t, sc.Bytes())
	}
	require.Equal(t, total, lines)

	resp, body = b.do(t, "GET", "/v1/citations?conversation_id="+one.ConversationID, nil, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, total+1)
	require.Equal(t, "marker", rows[0][3])

	// Deleting a document takes it out of search; what was cited stays readable.
	cited := cites[0]
	resp, _ = b.do(t, "DELETE", "/v1/documents/"+cited.Document.ID, nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	after := b.citationsOf(t, one.MessageID)
	require.Equal(t, markersOf(cites), markersOf(after))
	resp, body = b.do(t, "GET", "/v1/citations?doc_id="+cited.Document.ID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, decode[struct {
		Citations []citation `json:"citations"`
	}](t, body).Citations)
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "What should I do if I smell gas after an earthquake?"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, s := range decode[askResponse](t, body).Sources {
		require.NotEqual(t, cited.Document.ID, s.DocID, "a deleted document is not found again")
	}
	// Nor can it be pinned, though the conversation showed it: the pin would never be served.
	resp, body = b.do(t, "PUT", "/v1/conversations/"+one.ConversationID+"/pins/"+cited.Document.ID, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "was deleted")
}

func TestAskStream(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "how long does a freezer keep food frozen without power"},
		"Accept", "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))

	var types []string
	var meta askResponse
	var sources []source
	var done struct {
		Answer  string `json:"answer"`
		Timings []struct {
			Stage string  `json:"stage"`
			MS    float64 `json:"ms"`
		} `json:"timings"`
	}
	for ev, err := range sse.Read(bytes.NewReader(body), nil) {
		require.NoError(t, err)
		types = append(types, ev.Type)
		switch ev.Type {
		case "meta":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &meta))
		case "source":
			var s source
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &s))
			sources = append(sources, s)
		case "context":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &meta.Context))
		case "done":
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &done))
		default:
			t.Fatalf("unexpected event %q: %s", ev.Type, ev.Data)
		}
	}
	want := []string{"meta"}
	for range sources {
		want = append(want, "source")
	}
	want = append(want, "context", "done")
	require.Equal(t, want, types, "meta, one event per source, the context bundle, done")
	require.NotEmpty(t, meta.Context.Text)
	require.Len(t, meta.Context.Sections, 6)
	require.Equal(t, 1, meta.Turn)
	require.NotEmpty(t, meta.ConversationID)
	require.Equal(t, []string{"bm25"}, meta.Retrieval.Lists)
	require.Contains(t, meta.Retrieval.Skipped, "vector")
	require.Contains(t, meta.Retrieval.Skipped, "rerank", "without a cross-encoder the response says rerank was skipped")
	require.NotEmpty(t, sources)
	require.Contains(t, sources[0].Text, "freezer", "BM25 alone finds the power outage passage first")
	meta.Sources, meta.Answer = sources, done.Answer
	markers := checkTurn(t, meta)
	require.Equal(t, slices.Sorted(slices.Values(markers)), markersOf(b.citationsOf(t, meta.MessageID)))
	var stages []string
	for _, tm := range done.Timings {
		stages = append(stages, tm.Stage)
	}
	require.Subset(t, stages, []string{"bm25", "dedupe", "fuse", "facts", "persist", "total"})
}

func TestAskRejectsBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	missing := "0190f5b4-0000-7000-8000-000000000000"
	for _, tc := range []struct {
		name   string
		body   any
		header []string
		status int
		detail string
	}{
		{"empty message", map[string]any{"message": ""}, nil, 400, "message: is empty"},
		{"blank message", map[string]any{"message": " \n\t "}, nil, 400, "message: is empty"},
		{"message over the limit", map[string]any{"message": strings.Repeat("a", 8193)}, nil, 400, "over the 8192-byte limit"},
		{"invalid JSON", `{"message": "x"`, nil, 400, "invalid JSON"},
		{"two JSON values", `{"message": "x"} {}`, nil, 400, "more than one value"},
		{"unknown field", map[string]any{"message": "x", "conversation": "typo"}, nil, 400, `unknown field "conversation"`},
		{"malformed conversation id", map[string]any{"message": "x", "conversation_id": "not-a-uuid"}, nil, 400, "conversation_id: invalid UUID"},
		{"unknown conversation", map[string]any{"message": "x", "conversation_id": missing}, nil, 404, missing},
		{"unsupported accept", map[string]any{"message": "x"}, []string{"Accept", "text/html"}, 406, "application/json or text/event-stream"},
		{"not JSON", "message=x", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "application/json"},
		{"body too large", map[string]any{"message": strings.Repeat("a", 2<<20)}, nil, 413, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := b.do(t, "POST", "/v1/ask", tc.body, tc.header...)
			require.Equal(t, tc.status, resp.StatusCode, "%s", body)
			require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			p := decode[struct {
				Status int    `json:"status"`
				Title  string `json:"title"`
				Detail string `json:"detail"`
			}](t, body)
			require.Equal(t, tc.status, p.Status)
			require.Equal(t, http.StatusText(tc.status), p.Title)
			require.Contains(t, p.Detail, tc.detail)
		})
	}
	for _, table := range []string{"conversations", "messages", "message_citations", "conversation_sources"} {
		require.Zero(t, b.count(t, table), "a refused request writes nothing to %s", table)
	}

	for _, path := range []string{"/v1/conversations/nope", "/v1/messages/nope/citations", "/v1/documents/nope"} {
		resp, body := b.do(t, "GET", path, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
		require.Contains(t, string(body), `\"nope\" is not a UUID`)
	}
	for _, path := range []string{"/v1/conversations/" + missing, "/v1/messages/" + missing + "/citations", "/v1/documents/" + missing} {
		resp, _ := b.do(t, "GET", path, nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	for q, want := range map[string]string{
		"conversation_id=x": "not a UUID",
		"from=yesterday":    "RFC 3339",
		"from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z": "before to",
		"limit=0":    "limit",
		"format=xml": "json, jsonl or csv",
	} {
		resp, body := b.do(t, "GET", "/v1/citations?"+q, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		require.Contains(t, string(body), want, q)
	}
	resp, _ := b.do(t, "GET", "/v1/citations", nil, "Accept", "image/png")
	require.Equal(t, http.StatusNotAcceptable, resp.StatusCode)
}

// A failure in the middle of recording a turn leaves the conversation exactly as it was: the
// failure here is real, raised by PostgreSQL while the turn's citations are inserted.
func TestAskFailureMidTurnPersistsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarm batteries"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	first := decode[askResponse](t, body)
	before := map[string]int{}
	tables := []string{"conversations", "messages", "message_citations", "conversation_sources"}
	for _, table := range tables {
		before[table] = b.count(t, table)
	}

	b.exec(t, `CREATE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected failure'; END $$;
		CREATE TRIGGER fail_citations BEFORE INSERT ON message_citations
		FOR EACH ROW EXECUTE FUNCTION fail_insert();`)

	for _, req := range []map[string]any{
		{"conversation_id": first.ConversationID, "message": "how often should I test them"},
		{"message": "a new conversation fails the same way"},
	} {
		resp, body = b.do(t, "POST", "/v1/ask", req)
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
		require.NotContains(t, string(body), "injected", "internal errors do not leak")
	}
	for _, table := range tables {
		require.Equal(t, before[table], b.count(t, table), "%s is as it was", table)
	}
	resp, body = b.do(t, "GET", "/v1/conversations/"+first.ConversationID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 1, decode[struct {
		Turn int `json:"turn"`
	}](t, body).Turn)

	b.exec(t, `DROP TRIGGER fail_citations ON message_citations`)
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": first.ConversationID, "message": "how often should I test them"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, 2, decode[askResponse](t, body).Turn, "the failed turn did not take a turn number")
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	spec, err := server.Spec()
	require.NoError(t, err)
	documented := map[string]bool{}
	for path, item := range spec.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	param := regexp.MustCompile(`:(\w+)`)
	for _, r := range server.New(server.Config{}, server.Deps{}).Routes() {
		served[param.ReplaceAllString(r, "{$1}")] = true
	}
	for r := range served {
		require.True(t, documented[r], "route %s is served but not in openapi.yaml", r)
	}
	for d := range documented {
		require.True(t, served[d], "openapi.yaml documents %s, which is not served", d)
	}

	b := setup(t, options{})
	resp, body := b.do(t, "GET", "/openapi.json", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "3.0.3", decode[struct {
		OpenAPI string `json:"openapi"`
	}](t, body).OpenAPI)
}

// The load client of `ragd eval ask` reads the server's own stage timings.
func TestEvalLoadReadsStageTimings(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	qs := []eval.Query{{ID: "1", Text: "smoke alarms"}, {ID: "2", Text: "generator indoors"}, {ID: "3", Text: "burns"}}
	r, err := eval.Load(b.ctx, eval.LoadConfig{URL: b.srv.URL, Queries: qs, Warmup: 1, Concurrency: 2})
	require.NoError(t, err)
	require.Equal(t, 3, r.Requests)
	require.Contains(t, r.Order, "bm25")
	require.Positive(t, r.Stages["total"].P50)
	require.Positive(t, r.EndToEnd.P50)
	require.GreaterOrEqual(t, r.EndToEnd.P95, r.Stages["total"].P50, "the round trip includes the server's turn")
	require.Zero(t, r.RatioToRerank, "no cross-encoder, no rerank stage")
	var out bytes.Buffer
	require.NoError(t, r.WriteTable(&out))
	require.Contains(t, out.String(), "all but rerank")
}
