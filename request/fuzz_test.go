package request

import (
	"bytes"
	"encoding/base64"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd"
)

// The fuzz targets: one per request decoder. Their seeds run with `go test`; scripts/test.sh
// fuzzes them (scripts/fuzz.sh) for a bounded time. Each asserts that a decoder refuses with a
// client error, never a server error or a panic, and that what it accepts is storable text.

// clientError reports whether err is one a client caused: a 4xx, never a 500.
func clientError(err error) bool {
	var re *Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &re):
		return re.Status >= 400 && re.Status < 500
	case errors.As(err, &mbe):
		return true
	}
	return errors.Is(err, ragd.ErrInvalid)
}

// cleanStrings fails when any string reachable from v is not valid UTF-8 or holds a NUL: what a
// decoder accepts must be storable.
func cleanStrings(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanStrings(t, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			cleanStrings(t, v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes (an upload's data) are not text
		}
		for i := range v.Len() {
			cleanStrings(t, v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			cleanStrings(t, k)
			cleanStrings(t, v.MapIndex(k))
		}
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Fatalf("accepted %q", s)
		}
	}
}

// fuzzBody fuzzes a JSON body decoder.
func fuzzBody[T any](f *testing.F, decode func([]byte) (T, error), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decode(raw)
		if err != nil {
			if !clientError(err) {
				t.Fatalf("%q: %v is not a client error", raw, err)
			}
			return
		}
		cleanStrings(t, reflect.ValueOf(&v))
	})
}

const someID = "0190f5b4-0000-7000-8000-000000000000"

func FuzzAsk(f *testing.F) {
	type decoded struct {
		Ask  Ask
		Hint string
	}
	fuzzBody(f, func(raw []byte) (decoded, error) {
		a, hint, err := DecodeAsk(raw)
		if err == nil && hint != a.ModeHint && hint != a.Intent {
			return decoded{}, errors.New("the hint is neither mode_hint nor intent")
		}
		return decoded{a, hint}, err
	}, `{"message":"x","conversation_id":"`+someID+`","intent":"task","pins":[]}`,
		`{"message":"a\u0000"}`, "{\"message\":\"\xff\"}", `{"pins":["x"]}`, `{"mode_hint":"debug","intent":"task"}`)
}

func FuzzDocument(f *testing.F) {
	fuzzBody(f, func(raw []byte) (Document, error) {
		d, err := DecodeDocument(raw)
		if err == nil && (d.URL == "") == (len(d.Data) == 0) {
			return d, errors.New("accepted neither or both of a URL and a text")
		}
		return d, err
	}, `{"text":"t","title":"x","format":"markdown","source":"s"}`, `{"url":"http://a/"}`, `{"text":"t","format":"pdf"}`)
}

func FuzzReply(f *testing.F) {
	type decoded struct{ Content, Message string }
	fuzzBody(f, func(raw []byte) (decoded, error) {
		content, msg, err := DecodeReply(raw, 64)
		if err == nil && (content == "" || len(content) > 64) {
			return decoded{}, errors.New("accepted an empty or too long reply")
		}
		return decoded{content, msg.String()}, err
	}, `{"content":"ok","message_id":"`+someID+`"}`, `{"content":"  "}`)
}

func FuzzRename(f *testing.F) {
	fuzzBody(f, func(raw []byte) (string, error) {
		title, err := DecodeRename(raw)
		if err == nil && utf8.RuneCountInString(title) > MaxTitleChars {
			return "", errors.New("accepted a title over the limit")
		}
		return title, err
	}, `{"title":"Trip to Cambridge"}`, `{"title":""}`, `{"title":"a\nb"}`, `{}`)
}

func FuzzFeedback(f *testing.F) {
	fuzzBody(f, DecodeFeedback, `{"rating":"up","reason":"good","sources":[{"source":"A","flag":"helpful"}]}`,
		`{"rating":"down"}`, `{"rating":"sideways"}`)
}

func FuzzKey(f *testing.F) {
	fuzzBody(f, DecodeKey, `{"role":"chat","name":"ui"}`, `{"role":"admin"}`)
}

func FuzzBaseline(f *testing.F) {
	fuzzBody(f, DecodeBaseline, `{"distribution":{"TASK":0.5,"GENERAL":0.5}}`, `{"distribution":{"\u0000":1}}`,
		`{"distribution":{"TASK":1e308,"GENERAL":1e308}}`)
}

// FuzzUpload sends arbitrary multipart bodies through the upload decoder.
func FuzzUpload(f *testing.F) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("source", "key")
	fw, _ := w.CreateFormFile("file", "a.md")
	_, _ = fw.Write([]byte("# hi"))
	_ = w.Close()
	f.Add(buf.Bytes(), w.Boundary())
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"source\"\r\n\r\n\xff\r\n--b--\r\n"), "b")
	// The file part's own Content-Type reached the document unchecked (found by fuzzing in CI).
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\nContent-Type: \x8b\r\n\r\nx\r\n--b--\r\n"), "b")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/documents", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		d, err := ReadDocument(httptest.NewRecorder(), req, 1<<16)
		if err != nil {
			if !clientError(err) {
				t.Fatalf("%v is not a client error", err)
			}
			return
		}
		cleanStrings(t, reflect.ValueOf(d))
	})
}

// FuzzQuery sends an arbitrary query string, Accept header and path id through the decoders of
// query parameters, headers and ids.
func FuzzQuery(f *testing.F) {
	f.Add("limit=5&cursor=MTcwMDAwMDAwMDAwMDAwMC4wMTkwZjViNC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDA", "application/json", someID)
	f.Add("conversation_id="+someID+"&from=2026-01-02T15:04:05Z&to=2026-01-03T00:00:00Z&after=7&limit=10&format=csv", "text/csv;q=0.5, */*;q=0.1", "x")
	f.Add("q=%FF&limit=0&after=-1", "text/*", "")
	f.Add("q=%00", "", "") // a NUL in a document search reached PostgreSQL
	// Cursors with a time PostgreSQL would wrap (int64 microseconds at both ends, year 10000),
	// or a keyset spelt otherwise than the server writes it, gave a page instead of a 400.
	for _, raw := range []string{"9223372036854775807", "-9223372036854775808", "253402300800000000", "-62135596800000001", "+1700000000000000", "01700000000000000"} {
		f.Add("cursor="+base64.RawURLEncoding.EncodeToString([]byte(raw+"."+someID)), "", "")
	}
	f.Add("cursor="+base64.RawURLEncoding.EncodeToString([]byte("1700000000000000.urn:uuid:"+someID)), "", "")
	f.Fuzz(func(t *testing.T, rawQuery, accept, id string) {
		q, _ := url.ParseQuery(rawQuery) // what it could parse, as Echo's QueryParams
		check := func(what string, err error) {
			if err != nil && !clientError(err) {
				t.Fatalf("%s of %q: %v is not a client error", what, rawQuery, err)
			}
		}
		p, limit, err := Page(q)
		check("page", err)
		if err == nil && (limit < 1 || limit > maxPage || p.Limit != limit+1) {
			t.Fatalf("page of %q: limit %d, %d rows asked", rawQuery, limit, p.Limit)
		}
		// A cursor taken is one the server could have given: the same spelling, a time in range.
		if err == nil && p.After != nil && (encodeCursor(p.After.At, p.After.ID) != q.Get("cursor") ||
			p.After.At.Before(minCursorTime) || p.After.At.After(maxCursorTime)) {
			t.Fatalf("page of %q: cursor taken as %+v", rawQuery, *p.After)
		}
		s, err := DocumentQuery(q)
		check("document query", err)
		if err == nil {
			cleanStrings(t, reflect.ValueOf(s))
		}
		cf, err := Citations(q)
		check("citations", err)
		if err == nil && (cf.Limit < 0 || cf.Limit > maxExportPage || cf.AfterID < 0) {
			t.Fatalf("citations of %q: %+v", rawQuery, cf)
		}
		ff, err := FeedbackFilter(q)
		check("feedback", err)
		if err == nil && !ff.From.IsZero() && !ff.To.IsZero() && !ff.From.Before(ff.To) {
			t.Fatalf("feedback of %q: from %v is not before to %v", rawQuery, ff.From, ff.To)
		}
		format, err := ExportFormat(q, accept, "citations")
		check("format", err)
		if err == nil && format != MIMEJSON && format != MIMEJSONL && format != MIMECSV {
			t.Fatalf("format %q", format)
		}
		if got := Accepts(accept, MIMEJSON, MIMEEventStream); got != "" && got != MIMEJSON && got != MIMEEventStream {
			t.Fatalf("Accepts(%q) = %q", accept, got)
		}
		_, err = ID("id", id)
		check("id", err)
	})
}
