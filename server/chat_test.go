package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type conversationSummary struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Preview string `json:"preview"`
	Turn    int    `json:"turn"`
}

type conversationList struct {
	Conversations []conversationSummary `json:"conversations"`
	NextCursor    string                `json:"next_cursor"`
}

func (b *testBundle) listConversations(t *testing.T, query string) conversationList {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/conversations"+query, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return decode[conversationList](t, body)
}

func idsOf(cs []conversationSummary) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestConversationListRenameDelete(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	questions := []string{"smoke alarm batteries", "how long does a freezer keep food frozen without power", "what should I do if I smell gas"}
	var ids []string
	for _, q := range questions {
		ids = append(ids, b.ask(t, "", q).ConversationID)
	}
	// A second turn makes the first conversation the most recently active.
	b.ask(t, ids[0], "how often should I test them")

	all := b.listConversations(t, "")
	require.Equal(t, []string{ids[0], ids[2], ids[1]}, idsOf(all.Conversations), "newest activity first")
	require.Empty(t, all.NextCursor, "one page holds them all")
	require.Equal(t, questions[0], all.Conversations[0].Preview, "the preview is the first question")
	require.Equal(t, 2, all.Conversations[0].Turn)

	// Pages of two: the cursor continues strictly after the last row.
	first := b.listConversations(t, "?limit=2")
	require.Equal(t, []string{ids[0], ids[2]}, idsOf(first.Conversations))
	require.NotEmpty(t, first.NextCursor)
	second := b.listConversations(t, "?limit=2&cursor="+url.QueryEscape(first.NextCursor))
	require.Equal(t, []string{ids[1]}, idsOf(second.Conversations))
	require.Empty(t, second.NextCursor)

	// Rename: trimmed, shown in the list and in the conversation; a rename is not activity.
	resp, body := b.do(t, "PATCH", "/v1/conversations/"+ids[1], map[string]any{"title": "  Freezer during outages "})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, "Freezer during outages", decode[conversationSummary](t, body).Title)
	after := b.listConversations(t, "")
	require.Equal(t, idsOf(all.Conversations), idsOf(after.Conversations), "renaming does not reorder")
	require.Equal(t, "Freezer during outages", after.Conversations[2].Title)
	resp, body = b.do(t, "GET", "/v1/conversations/"+ids[1], nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "Freezer during outages", decode[conversationSummary](t, body).Title)

	// Delete: gone from chat, kept for audit.
	gone := b.ask(t, ids[2], "and after the smell is gone?")
	cites := b.citationsOf(t, gone.MessageID)
	require.NotEmpty(t, cites)
	resp, _ = b.do(t, "DELETE", "/v1/conversations/"+ids[2], nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, []string{ids[0], ids[1]}, idsOf(b.listConversations(t, "").Conversations))
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/conversations/" + ids[2], nil},
		{"GET", "/v1/conversations/" + ids[2] + "/sources", nil},
		{"POST", "/v1/ask", map[string]any{"conversation_id": ids[2], "message": "still there?"}},
		{"POST", "/v1/conversations/" + ids[2] + "/messages", map[string]any{"content": "a reply"}},
		{"PUT", "/v1/conversations/" + ids[2] + "/pins/" + cites[0].Document.ID, nil},
		{"PATCH", "/v1/conversations/" + ids[2], map[string]any{"title": "x"}},
		{"DELETE", "/v1/conversations/" + ids[2], nil},
	} {
		resp, body := b.do(t, r.method, r.path, r.body)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", r.method, r.path, body)
	}
	require.Equal(t, markersOf(cites), markersOf(b.citationsOf(t, gone.MessageID)), "an auditor still reads every citation")
	resp, body = b.do(t, "GET", "/v1/citations?conversation_id="+ids[2], nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, decode[struct {
		Citations []citation `json:"citations"`
	}](t, body).Citations, len(cites)+len(b.citationsOf(t, mustFirstMessage(t, b, ids[2]))))

	// Bad input is a 400 and changes nothing.
	missing := "0190f5b4-0000-7000-8000-000000000000"
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{"GET", "/v1/conversations?limit=0", nil, 400, "limit"},
		{"GET", "/v1/conversations?limit=101", nil, 400, "limit"},
		{"GET", "/v1/conversations?cursor=bogus", nil, 400, "cursor"},
		// int64's largest microseconds: pgx wrapped them into another time, and a wrong page.
		{"GET", "/v1/conversations?cursor=OTIyMzM3MjAzNjg1NDc3NTgwNy4wMTkwZjViNC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDA", nil, 400, "names a time out of range"},
		{"PATCH", "/v1/conversations/" + ids[0], map[string]any{}, 400, "title: is missing"},
		{"PATCH", "/v1/conversations/" + ids[0], map[string]any{"title": strings.Repeat("x", 201)}, 400, "over 200"},
		{"PATCH", "/v1/conversations/" + ids[0], map[string]any{"title": "two\nlines"}, 400, "control"},
		{"PATCH", "/v1/conversations/" + ids[0], map[string]any{"title": "x", "name": "y"}, 400, "unknown field"},
		{"PATCH", "/v1/conversations/nope", map[string]any{"title": "x"}, 400, "not a UUID"},
		{"PATCH", "/v1/conversations/" + missing, map[string]any{"title": "x"}, 404, missing},
		{"DELETE", "/v1/conversations/" + missing, nil, 404, missing},
	} {
		resp, body := b.do(t, tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.method, tc.path, body)
		require.Contains(t, string(body), tc.detail)
	}
	require.Equal(t, "", b.listConversations(t, "").Conversations[0].Title, "refused renames changed nothing")
}

// mustFirstMessage returns the assistant message of a conversation's first turn, read from the
// audit export (the conversation itself may be deleted).
func mustFirstMessage(t *testing.T, b *testBundle, conv string) string {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/citations?conversation_id="+conv+"&limit=1", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cs := decode[struct {
		Citations []struct {
			MessageID string `json:"message_id"`
		} `json:"citations"`
	}](t, body).Citations
	require.NotEmpty(t, cs)
	return cs[0].MessageID
}

type documentSummary struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Source   string `json:"source"`
	Version  int    `json:"version"`
	Date     string `json:"date"`
	DateKind string `json:"date_kind"`
	Chunks   int    `json:"chunks"`
}

type documentList struct {
	Documents  []documentSummary `json:"documents"`
	NextCursor string            `json:"next_cursor"`
}

func TestDocumentList(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	list := func(query string) documentList {
		t.Helper()
		resp, body := b.do(t, "GET", "/v1/documents"+query, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		return decode[documentList](t, body)
	}
	var all []documentSummary
	for cursor := ""; ; {
		page := list("?limit=3&cursor=" + url.QueryEscape(cursor))
		require.LessOrEqual(t, len(page.Documents), 3)
		all = append(all, page.Documents...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	require.Greater(t, len(all), 3, "the corpus spans pages")
	seen, kinds := map[string]bool{}, map[string]bool{}
	for _, d := range all {
		require.False(t, seen[d.ID], "no document twice across pages")
		seen[d.ID] = true
		require.NotEmpty(t, d.Title)
		require.NotEmpty(t, d.Source)
		require.NotEmpty(t, d.Date)
		kinds[d.DateKind] = true
		require.Positive(t, d.Chunks)
		require.Equal(t, 1, d.Version)
	}
	require.Equal(t, map[string]bool{"published": true, "ingested": true}, kinds, "the corpus has dated and undated documents")
	require.Len(t, list("?limit=100").Documents, len(all))

	// Search by title, ignoring case; a LIKE wildcard is taken literally.
	target := all[len(all)/2]
	word := strings.Fields(target.Title)[0]
	found := list("?q=" + url.QueryEscape(strings.ToUpper(word))).Documents
	require.NotEmpty(t, found)
	var ids []string
	for _, d := range found {
		require.Contains(t, strings.ToLower(d.Title+" "+d.Source), strings.ToLower(word))
		ids = append(ids, d.ID)
	}
	require.Contains(t, ids, target.ID)
	require.Empty(t, list("?q=%25%25nothing%25").Documents)

	// A deleted document is not offered.
	resp, _ := b.do(t, "DELETE", "/v1/documents/"+target.ID, nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	for _, d := range list("?limit=100").Documents {
		require.NotEqual(t, target.ID, d.ID)
	}

	for q, want := range map[string]string{"?limit=0": "limit", "?cursor=x": "cursor", "?q=" + strings.Repeat("a", 257): "q:"} {
		resp, body := b.do(t, "GET", "/v1/documents"+q, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		require.Contains(t, string(body), want)
	}
}

// The request's mode hint is mode_hint; its old name intent is still read. An assistant
// message's content is ragd's answer until the UI records its reply.
func TestModeHintAndAssistantContent(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	r := b.askWith(t, map[string]any{"message": "smoke alarm batteries", "mode_hint": "debug"})
	require.Equal(t, "DEBUGGING", r.Mode.Label)
	require.Equal(t, "mapped", r.Mode.Source)
	old := b.askWith(t, map[string]any{"message": "smoke alarm batteries", "intent": "learn"})
	require.Equal(t, "LEARNING", old.Mode.Label, "the deprecated name still works")
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "x", "intent": "learn", "mode_hint": "debug"})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), "mode_hint")

	type message struct {
		Role            string  `json:"role"`
		Content         string  `json:"content"`
		Answer          string  `json:"answer"`
		ReplyRecordedAt *string `json:"reply_recorded_at"`
	}
	messages := func() []message {
		resp, body := b.do(t, "GET", "/v1/conversations/"+r.ConversationID, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return decode[struct {
			Messages []message `json:"messages"`
		}](t, body).Messages
	}
	ms := messages()
	require.Equal(t, "smoke alarm batteries", ms[0].Content)
	require.Equal(t, r.Answer, ms[1].Content, "before a reply is recorded, content is ragd's answer")
	require.Nil(t, ms[1].ReplyRecordedAt)
	resp, _ = b.do(t, "POST", "/v1/conversations/"+r.ConversationID+"/messages", map[string]any{"content": "Replace them yearly [A1]."})
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	ms = messages()
	require.Equal(t, "Replace them yearly [A1].", ms[1].Content)
	require.Equal(t, r.Answer, ms[1].Answer)
	require.NotNil(t, ms[1].ReplyRecordedAt)
}

// An uploaded file's name is the document's path, as a file's is for `ragd ingest`: a document
// without a title of its own was found by nothing but its content's hash, and its sources and
// citations said nowhere which file they came from.
func TestUploadKeepsItsFileName(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	resp, body := b.upload(t, "llama care.txt", []byte("Llamas spit when they are annoyed. Keep two llamas together."))
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	id := decode[struct {
		DocID string `json:"doc_id"`
	}](t, body).DocID

	resp, body = b.do(t, "GET", "/v1/documents/"+id, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	doc := decode[struct {
		Title string `json:"title"`
		Path  string `json:"path"`
	}](t, body)
	require.Empty(t, doc.Title, "the text has no title of its own")
	require.Equal(t, "llama care.txt", doc.Path)

	resp, body = b.do(t, "GET", "/v1/documents?q="+url.QueryEscape("LLAMA CARE"), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	found := decode[documentList](t, body).Documents
	require.Len(t, found, 1, "the pin picker finds it by its file's name")
	require.Equal(t, id, found[0].ID)

	turn := b.ask(t, "", "why do llamas spit?")
	require.NotEmpty(t, turn.Sources)
	require.Equal(t, id, turn.Sources[0].DocID)
	resp, body = b.do(t, "GET", "/v1/messages/"+turn.MessageID+"/citations", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), `"path":"llama care.txt"`, "the audit says which file was cited")

	// A JSON body has no file: its made-up name is not a path.
	resp, body = b.do(t, "POST", "/v1/documents", map[string]any{"text": "Alpacas hum.", "format": "text"})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "GET", "/v1/documents/"+decode[struct {
		DocID string `json:"doc_id"`
	}](t, body).DocID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NotContains(t, string(body), `"path"`+`:"document`)
}
