package server

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// clientError reports whether err is one a client caused: a 4xx, never a 500.
func clientError(err error) bool {
	status, _ := statusOf(err)
	return status >= 400 && status < 500
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

func fuzzDecoder[T any](f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v T
		if err := decodeJSONBytes(raw, &v); err != nil {
			if !clientError(err) {
				t.Fatalf("%q: %v is not a client error", raw, err)
			}
			return
		}
		cleanStrings(t, reflect.ValueOf(&v))
	})
}

func FuzzDecodeAsk(f *testing.F) {
	fuzzDecoder[askRequest](f, `{"message":"x","conversation_id":"0190f5b4-0000-7000-8000-000000000000","intent":"task","pins":[]}`,
		`{"message":"a\u0000"}`, "{\"message\":\"\xff\"}", `{"pins":["x"]}`)
}

func FuzzDecodeDocument(f *testing.F) {
	fuzzDecoder[documentRequest](f, `{"text":"t","title":"x","format":"markdown","source":"s"}`, `{"url":"http://a/"}`)
}

func FuzzDecodeReply(f *testing.F) {
	fuzzDecoder[replyRequest](f, `{"content":"ok","message_id":"0190f5b4-0000-7000-8000-000000000000"}`)
}

// FuzzDocumentUpload sends arbitrary multipart bodies through the upload decoder.
func FuzzDocumentUpload(f *testing.F) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("source", "key")
	fw, _ := w.CreateFormFile("file", "a.md")
	_, _ = fw.Write([]byte("# hi"))
	_ = w.Close()
	f.Add(buf.Bytes(), w.Boundary())
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"source\"\r\n\r\n\xff\r\n--b--\r\n"), "b")
	s := &Server{cfg: Config{MaxUploadBytes: 1 << 16}.WithDefaults()}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/documents", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		c := e.NewContext(req, httptest.NewRecorder())
		src, err := s.documentSource(c)
		if err != nil {
			var mbe *http.MaxBytesError
			if !clientError(err) && !errors.As(err, &mbe) && !errors.Is(err, ragd.ErrInvalid) {
				// A body the multipart reader cannot read is the client's.
				status, _ := statusOf(err)
				if status >= 500 {
					t.Fatalf("%v is a %d", err, status)
				}
			}
			return
		}
		cleanStrings(t, reflect.ValueOf(src.Key))
		cleanStrings(t, reflect.ValueOf(src.Name))
	})
}
