package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/llm"
)

// EnvChromium names the browser the page test drives; by default Debian's chromium on PATH.
const envChromium = "RAGD_CHROMIUM"

// chromiumPath finds Chromium, failing the test when it is missing: a browser test that skipped
// silently would hide a broken CI, like a database test without its database.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("Chromium is not installed: scripts/setup.sh installs Debian's chromium package (or set %s to a Chromium binary)", envChromium)
	return ""
}

// artifactDir is where the page test saves its screenshots: $RAGD_TEST_ARTIFACTS/page, or a
// directory under the system's temporary directory; the test prints it.
func artifactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("RAGD_TEST_ARTIFACTS")
	if root == "" {
		root = filepath.Join(os.TempDir(), "ragd-test-artifacts")
	}
	dir := filepath.Join(root, "page")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots in %s", dir)
	return dir
}

// heldLLM is an OpenAI-compatible endpoint that streams the first sentence of its answer, waits
// until the test lets it go on, then finishes, citing the first marker of the prompt and one it
// invents (which ragd must drop). The wait makes "the page shows the answer while it streams"
// something the test can see without timing anything.
func heldLLM(t *testing.T, release <-chan struct{}) *httptest.Server {
	t.Helper()
	return fakeChat(t, func(w http.ResponseWriter, r *http.Request, marker string) {
		sendDelta(w, "Leave the building first, ")
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		sendDelta(w, "then call the gas company from outside ["+marker+"]. ")
		sendDelta(w, "Never use a phone inside [ZZ99].")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
}

// TestPageInChromium drives the chat and audit page in real headless Chromium: ask, watch the
// answer stream, pin a source, open the audit of a marker. Screenshots of each step are saved.
func TestPageInChromium(t *testing.T) {
	t.Parallel()
	browser := chromiumPath(t)
	shots := artifactDir(t)
	release := make(chan struct{})
	client, err := llm.New(llm.Config{BaseURL: heldLLM(t, release).URL + "/v1", Model: "fake"})
	require.NoError(t, err)
	b := setup(t, options{corpus: true, answerer: client})

	// The flags these machines need (a closed network; root, so no sandbox); a fresh profile.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-component-update", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer cancelTab()
	// A deadline only so that a broken page fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	shot := func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			png, err := chromedp.FullScreenshot(100)(ctx, tg) // quality 100 is PNG; less is JPEG
			if err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, steps...), what)
	}
	text := func(selector string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector)))
		require.NoError(t, err, "reading %s", selector)
		return v
	}
	attr := func(selector, name string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(selector), name))
		require.NoError(t, err, "reading %s of %s", name, selector)
		require.True(t, v.Exists, "%s has %s", selector, name)
		return v.Value
	}
	count := func(selector string) int {
		t.Helper()
		return evaluate[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, selector))
	}

	// The page loads from the binary and lists the documents a user can pin.
	do("opening the page", chromedp.Navigate(b.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("question")),
		chromedp.WaitVisible(chromedp.CSS(`#doc-results li[data-doc]`)))
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	require.Equal(t, "ragd — chat and audit", title)
	require.Positive(t, count(`#doc-results li[data-doc]`), "the pin picker lists documents")

	// Ask.
	question := "I smell gas after the earthquake"
	do("asking", chromedp.SendKeys(chromedp.ID("question"), question), shot("1-ask"), chromedp.Click(chromedp.ID("ask")))

	// Stream: the first words are on the page while the turn is still streaming.
	do("watching the stream",
		chromedp.WaitVisible(chromedp.CSS(`#messages article.assistant[aria-busy="true"] .answer`)),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#messages article.assistant .answer")||{textContent:""}).textContent.includes("Leave the building")`),
		shot("2-stream"))
	require.Equal(t, "Leave the building first,", strings.TrimSpace(text(`#messages article.assistant .answer`)), "the answer shows while it streams")
	require.Equal(t, "true", attr(`#messages article.assistant`, "aria-busy"), "the message is still streaming")
	require.True(t, evaluate[bool](t, ctx, `document.getElementById("ask").disabled`), "Ask is disabled while the answer streams")
	require.False(t, evaluate[bool](t, ctx, `document.getElementById("stop").hidden`), "Stop is offered while the answer streams")
	require.Positive(t, count(`#turn-sources li.card`), "sources arrive before the answer")
	close(release)

	// Done: markers are links to the cited passages; the invented marker never shows.
	do("waiting for the answer", chromedp.WaitVisible(chromedp.CSS(`#messages article.assistant:not([aria-busy]) a.marker`)))
	answer := text(`#messages article.assistant .answer`)
	marker := attr(`#messages article.assistant a.marker`, "data-marker")
	require.Contains(t, answer, "Leave the building first, then call the gas company from outside ["+marker+"].")
	require.NotContains(t, answer, "ZZ99", "a marker the LLM invented is not shown")
	require.Equal(t, 1, count(`#turn-sources #fact-`+marker), "the marker's fact is in the sources panel")
	letters := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll("#turn-sources li.card")).map(c => c.dataset.letter)`)
	require.NotEmpty(t, letters)
	seen := map[string]bool{}
	for _, l := range letters {
		require.False(t, seen[l], "one source per letter")
		seen[l] = true
	}
	require.True(t, evaluate[bool](t, ctx, `document.getElementById("stop").hidden`), "Stop is gone once the answer is done")
	// The list is read again once the answer is done.
	do("waiting for the conversation list", chromedp.WaitVisible(chromedp.CSS(`#conversation-list li[data-conversation] .open`)))
	require.Equal(t, 1, count(`#conversation-list li[data-conversation]`), "the new conversation is listed")
	convID := attr(`#conversation-list li[data-conversation]`, "data-conversation")
	require.Equal(t, question, text(`#conversation-list li .open`), "it is named by its first question")

	// Pin the first source: the button says so, the conversation carries it, the API agrees.
	doc := attr(`#turn-sources li.card`, "data-doc")
	do("pinning", chromedp.Click(chromedp.CSS(`#turn-sources li.card button.pin`)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#conversation-sources li[data-doc="%s"] button.pin[aria-pressed="true"]`, doc))),
		shot("3-pin"))
	require.Equal(t, "true", attr(`#turn-sources li.card button.pin`, "aria-pressed"))
	require.Equal(t, "Unpin", text(`#turn-sources li.card button.pin`))
	resp, body := b.do(t, "GET", "/v1/conversations/"+convID+"/sources", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	pinned := map[string]bool{}
	for _, s := range decode[struct {
		Sources []struct {
			DocID  string `json:"doc_id"`
			Pinned bool   `json:"pinned"`
		} `json:"sources"`
	}](t, body).Sources {
		pinned[s.DocID] = s.Pinned
	}
	require.True(t, pinned[doc], "the pin reached the server")

	// Audit: the marker opens the citations of its message, focused on the cited passage with
	// the fact marked in it and the document version.
	messageID := attr(`#messages article.assistant a.marker`, "data-message")
	do("auditing", chromedp.Click(chromedp.CSS(`#messages article.assistant a.marker`)),
		chromedp.WaitVisible(chromedp.CSS(`#audit[open] #audit-list li.citation.focused`)), shot("4-audit"))
	require.Equal(t, marker, attr(`#audit-list li.citation.focused`, "data-marker"))
	cites := b.citationsOf(t, messageID)
	require.Equal(t, len(cites), count(`#audit-list li.citation`), "every citation of the message is shown")
	var want citation
	for _, c := range cites {
		if c.Marker == marker {
			want = c
		}
	}
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	require.Equal(t, fields(want.Fact), fields(text(`#audit-list li.citation.focused q`)))
	require.Equal(t, fields(want.Fact), fields(text(`#audit-list li.citation.focused mark`)), "the fact is marked in its passage")
	require.Contains(t, fields(want.Chunk.Text), fields(text(`#audit-list li.citation.focused blockquote`)), "the passage as cited")
	meta := text(`#audit-list li.citation.focused .meta`)
	require.Contains(t, meta, fmt.Sprintf("version %d", want.Document.Version))
	require.Contains(t, meta, want.Document.Title)
	do("closing the audit", chromedp.Click(chromedp.ID("audit-close")), chromedp.WaitNotVisible(chromedp.ID("audit")))

	// The pinned document is deleted: reopened, the conversation lists it as deleted, the pin
	// standing until unpinned.
	resp, body = b.do(t, "DELETE", "/v1/documents/"+doc, nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	source := fmt.Sprintf(`#conversation-sources li[data-doc="%s"]`, doc)
	do("reopening after the delete", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#conversation-list li[data-conversation="%s"] .open`, convID))),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`((document.querySelector(%q)||{textContent:""}).textContent).includes("deleted")`, source+" .meta")))
	require.Equal(t, "pinned · deleted, not carried", text(source+" .meta"))
	require.Equal(t, "true", attr(source+" button.pin", "aria-pressed"), "it can be unpinned")

	// The server recorded the answer the page showed, not the fact sheet.
	ms := b.messages(t, convID)
	require.Len(t, ms, 2)
	require.Contains(t, ms[1].Answer, "then call the gas company from outside ["+marker+"]")

	// Rename in place, then delete: the list follows, and the API agrees.
	row := fmt.Sprintf(`#conversation-list li[data-conversation="%s"]`, convID)
	do("renaming", chromedp.Click(chromedp.CSS(row+" button.rename")), chromedp.WaitVisible(chromedp.CSS(row+" input.title-input")),
		chromedp.SendKeys(chromedp.CSS(row+" input.title-input"), "Gas after a quake\r"),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(document.querySelector(%q)||{textContent:""}).textContent === "Gas after a quake"`, row+" .open")))
	resp, body = b.do(t, "GET", "/v1/conversations/"+convID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "Gas after a quake", decode[conversationSummary](t, body).Title)
	do("deleting", chromedp.Click(chromedp.CSS(row+" button.delete")), shot("5-delete"),
		chromedp.Click(chromedp.CSS(row+" button.confirm-delete")), chromedp.WaitNotPresent(chromedp.CSS(row)))
	require.Zero(t, count(`#conversation-list li`), "the deleted conversation left the list")
	require.Zero(t, count(`#messages article`), "the open chat was the deleted one: the page starts a new chat")
	resp, _ = b.do(t, "GET", "/v1/conversations/"+convID, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, len(cites), len(b.citationsOf(t, messageID)), "its citations stay for auditors")
}

// evaluate runs a JavaScript expression in the page and decodes its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}
