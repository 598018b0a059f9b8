package request

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
)

// The JSON bodies of the API's routes. openapi.yaml describes each of them.

// Ask is the body of POST /v1/ask.
type Ask struct {
	ConversationID *uuid.UUID `json:"conversation_id"`
	Message        string     `json:"message"`
	// ModeHint is the UI's word for the interaction (task, debug, explore, learn, general...),
	// which picks the mode; the response's turn_intent is another thing (how the turn relates
	// to the conversation).
	ModeHint string `json:"mode_hint"`
	// Intent is ModeHint's deprecated name, still read.
	Intent string      `json:"intent"`
	Pins   []uuid.UUID `json:"pins"`
}

// MaxModeHintBytes bounds mode_hint (and intent, its old name).
const MaxModeHintBytes = 64

// DecodeAsk decodes an /v1/ask body. The hint returned is the mode hint from either of its
// names. The message itself is the pipeline's to check (its limits are the pipeline's).
func DecodeAsk(raw []byte) (a Ask, hint string, err error) {
	if err := Decode(raw, &a); err != nil {
		return a, "", err
	}
	// The pipeline reads the nil UUID as "no conversation": sent, it would start a new one at
	// every turn of a UI that never stored the id it got back, losing the conversation quietly.
	if a.ConversationID != nil && *a.ConversationID == uuid.Nil {
		return a, "", invalidf("conversation_id", "is the nil UUID, which names no conversation: omit it (or send null) to start one")
	}
	// The hints are words; a megabyte of one was accepted and ignored.
	for _, f := range [...]struct{ name, v string }{{"mode_hint", a.ModeHint}, {"intent", a.Intent}} {
		if len(f.v) > MaxModeHintBytes {
			return a, "", invalidf(f.name, "is %d bytes, over the %d-byte limit (a hint is a word: task, debug, explore, learn, general)", len(f.v), MaxModeHintBytes)
		}
	}
	switch {
	case a.Intent == "":
		return a, a.ModeHint, nil
	case a.ModeHint == "" || a.ModeHint == a.Intent:
		return a, a.Intent, nil
	}
	return a, "", invalidf("intent", "is the deprecated name of mode_hint; send mode_hint alone")
}

// Header names of idempotent retries: the key a client sends to make /v1/ask safe to retry, and
// the one a replayed response carries.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
	maxIdempotencyKey    = 255
)

// Idempotency reads the request's Idempotency-Key, if any (nil without one), with the hash of
// what the ask a asks: the conversation, the message, the mode hint and the pins (not the
// response format, so a retry may ask for JSON what it first asked as a stream).
func Idempotency(h http.Header, a Ask, hint string) (*ragd.Idempotency, error) {
	key, ok := h[HeaderIdempotencyKey]
	if !ok {
		return nil, nil
	}
	if len(key) != 1 || key[0] == "" || len(key[0]) > maxIdempotencyKey {
		return nil, invalidf(HeaderIdempotencyKey, "must be one value of 1 to %d characters", maxIdempotencyKey)
	}
	for _, r := range key[0] {
		if r < 0x21 || r > 0x7e {
			return nil, invalidf(HeaderIdempotencyKey, "must be printable ASCII without spaces")
		}
	}
	canon, err := json.Marshal(struct {
		ConversationID any    `json:"c"`
		Message        string `json:"m"`
		ModeHint       string `json:"h"`
		Pins           any    `json:"p"`
	}{a.ConversationID, a.Message, hint, a.Pins})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return &ragd.Idempotency{Key: key[0], RequestHash: sum[:]}, nil
}

// Document is a document to ingest, from a JSON body or a multipart upload: either a URL to
// fetch, or the document's bytes.
type Document struct {
	URL string // fetch this; the other fields are empty
	// Key is the document's identity (the source field); empty identifies it by its content.
	Key  string
	Name string // a file name, whose extension says the format
	// FileName is the uploaded file's name as the client gave it; empty for a JSON body.
	FileName    string
	Title       string
	ContentType string
	Data        []byte
}

type documentJSON struct {
	Text   string `json:"text"`
	Title  string `json:"title"`
	Format string `json:"format"`
	URL    string `json:"url"`
	Source string `json:"source"`
}

var formatExt = map[string]string{"markdown": ".md", "text": ".txt", "html": ".html", "pdf": ".pdf"}

// DecodeDocument decodes a JSON document body: its text (markdown, text or html), or a URL.
func DecodeDocument(raw []byte) (Document, error) {
	var req documentJSON
	if err := Decode(raw, &req); err != nil {
		return Document{}, err
	}
	if err := sourceKey(req.Source); err != nil {
		return Document{}, err
	}
	switch {
	case req.URL != "" && req.Text != "":
		return Document{}, invalidf("body", "give text or url, not both")
	case req.URL != "":
		return Document{URL: req.URL}, nil
	case strings.TrimSpace(req.Text) == "":
		return Document{}, invalidf("text", "is empty (or give a url)")
	}
	if n := utf8.RuneCountInString(req.Title); n > ragd.MaxTitleRunes {
		return Document{}, invalidf("title", "is %d characters, over the %d-character limit", n, ragd.MaxTitleRunes)
	}
	format := req.Format
	if format == "" {
		format = "text"
	}
	ext, ok := formatExt[format]
	if !ok || format == "pdf" {
		return Document{}, invalidf("format", "%q: want markdown, text or html (upload PDFs as files)", format)
	}
	return Document{Key: req.Source, Name: "document" + ext, Title: req.Title, Data: []byte(req.Text)}, nil
}

// ReadDocument reads POST /v1/documents: a multipart upload of at most limit bytes (field file;
// optional field source names the document's identity), or a JSON body (DecodeDocument).
func ReadDocument(w http.ResponseWriter, r *http.Request, limit int64) (Document, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case MIMEMultipart:
		return upload(w, r, limit)
	case MIMEJSON:
		raw, err := Body(w, r, limit)
		if err != nil {
			return Document{}, err
		}
		return DecodeDocument(raw)
	}
	return Document{}, &Error{Status: http.StatusUnsupportedMediaType, Detail: "send a multipart/form-data upload or application/json"}
}

// upload reads a multipart upload.
func upload(w http.ResponseWriter, r *http.Request, limit int64) (Document, error) {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	f, fh, err := r.FormFile("file")
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Document{}, err
		}
		return Document{}, invalidf("file", "multipart upload needs a file field: %v", err)
	}
	defer f.Close()
	if err := uploadFields(r.MultipartForm); err != nil {
		return Document{}, err
	}
	for name, vs := range r.MultipartForm.Value {
		for _, v := range vs {
			if err := Text(name, v); err != nil {
				return Document{}, err
			}
		}
	}
	if err := Text("file", fh.Filename); err != nil {
		return Document{}, invalidf("file", "its file name is not valid UTF-8 or holds a NUL character")
	}
	contentType := fh.Header.Get("Content-Type")
	if err := Text("file", contentType); err != nil {
		return Document{}, invalidf("file", "its Content-Type is not valid UTF-8 or holds a NUL character")
	}
	if err := sourceKey(r.FormValue("source")); err != nil {
		return Document{}, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return Document{}, err
	}
	// An upload is identified by its content unless the client names it with a source key.
	return Document{Key: r.FormValue("source"), Name: fh.Filename, FileName: fh.Filename, ContentType: contentType, Data: data}, nil
}

// sourceKey refuses a source key longer than the store can index.
func sourceKey(key string) error {
	if len(key) > ragd.MaxSourceKeyBytes {
		return invalidf("source", "is %d bytes, over the %d-byte limit", len(key), ragd.MaxSourceKeyBytes)
	}
	return nil
}

// uploadFields refuses a part an upload does not read, and a file or source given more than
// once, as Only does for query parameters: a misspelt source ("sorce") would otherwise be
// dropped, and the document identified by its content, so a changed upload would become a second
// document instead of a new version of the first.
func uploadFields(form *multipart.Form) error {
	names := slices.Sorted(maps.Keys(form.Value))
	names = append(names, slices.Sorted(maps.Keys(form.File))...)
	for _, name := range names {
		n := len(form.Value[name]) + len(form.File[name])
		switch {
		case name == "source" && len(form.File[name]) > 0:
			return invalidf(name, "must be a text field, not a file")
		case name != "file" && name != "source":
			return invalidf(name, "is not a field of an upload (it reads file and source)")
		case n > 1:
			return invalidf(name, "is given %d times", n)
		}
	}
	return nil
}

type replyJSON struct {
	Content   string     `json:"content"`
	MessageID *uuid.UUID `json:"message_id"`
}

// DecodeReply decodes the reply a chat UI recorded for a turn: its content, trimmed, at most
// maxBytes, and the assistant message it answers (uuid.Nil: the latest).
func DecodeReply(raw []byte, maxBytes int) (content string, msg uuid.UUID, err error) {
	var req replyJSON
	if err := Decode(raw, &req); err != nil {
		return "", uuid.Nil, err
	}
	content = strings.TrimSpace(req.Content)
	switch {
	case content == "":
		return "", uuid.Nil, invalidf("content", "is empty")
	case len(content) > maxBytes:
		return "", uuid.Nil, invalidf("content", "is %d bytes, over the %d-byte limit", len(content), maxBytes)
	case !utf8.ValidString(content):
		return "", uuid.Nil, invalidf("content", "is not valid UTF-8")
	}
	if req.MessageID != nil {
		if *req.MessageID == uuid.Nil {
			return "", uuid.Nil, invalidf("message_id", "is the nil UUID, which names no message: omit it (or send null) for the latest turn")
		}
		msg = *req.MessageID
	}
	return content, msg, nil
}

// MaxTitleChars bounds a conversation's title: a list shows it on one line.
const MaxTitleChars = 200

// DecodeRename decodes a conversation's new title, trimmed; "" clears it.
func DecodeRename(raw []byte) (string, error) {
	var req struct {
		Title *string `json:"title"`
	}
	if err := Decode(raw, &req); err != nil {
		return "", err
	}
	if req.Title == nil {
		return "", invalidf("title", "is missing (send \"\" to clear it)")
	}
	title := strings.TrimSpace(*req.Title)
	switch {
	case !utf8.ValidString(title):
		return "", invalidf("title", "is not valid UTF-8")
	case utf8.RuneCountInString(title) > MaxTitleChars:
		return "", invalidf("title", "is over %d characters", MaxTitleChars)
	case strings.ContainsFunc(title, unicode.IsControl):
		return "", invalidf("title", "holds control characters (a title is one line)")
	}
	return title, nil
}

// MaxReasonBytes bounds the free-text reason of a rating.
const MaxReasonBytes = 2000

// maxSourceFlags bounds the flags of one rating.
const maxSourceFlags = 100

// Feedback is a user's rating of an answer.
type Feedback struct {
	Rating  string            `json:"rating"`
	Reason  string            `json:"reason"`
	Sources []ragd.SourceFlag `json:"sources"`
}

// DecodeFeedback decodes a rating: up or down, a reason (trimmed) and per-source flags.
func DecodeFeedback(raw []byte) (Feedback, error) {
	var req Feedback
	if err := Decode(raw, &req); err != nil {
		return req, err
	}
	req.Reason = strings.TrimSpace(req.Reason)
	switch {
	case req.Rating != ragd.RatingUp && req.Rating != ragd.RatingDown:
		return req, invalidf("rating", "must be up or down, got %q", req.Rating)
	case len(req.Reason) > MaxReasonBytes:
		return req, invalidf("reason", "is %d bytes, over the %d-byte limit", len(req.Reason), MaxReasonBytes)
	case !utf8.ValidString(req.Reason):
		return req, invalidf("reason", "is not valid UTF-8")
	case len(req.Sources) > maxSourceFlags:
		return req, invalidf("sources", "has %d flags, at most %d", len(req.Sources), maxSourceFlags)
	}
	return req, nil
}

// Key is an admin's request for a new API key of its tenant; the store checks the role.
type Key struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

// DecodeKey decodes a request for a key.
func DecodeKey(raw []byte) (Key, error) {
	var k Key
	return k, Decode(raw, &k)
}

// DecodeBaseline decodes a drift baseline: a share per mode name (the drift monitor checks them).
func DecodeBaseline(raw []byte) (map[string]float64, error) {
	var req struct {
		Distribution map[string]float64 `json:"distribution"`
	}
	// mode.Baseline.Validate, which the handler calls, checks the shares (their sum included).
	err := Decode(raw, &req)
	return req.Distribution, err
}
