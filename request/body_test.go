package request

import (
	"bytes"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ragd/ragd"
)

// An id that is not a UUID is refused naming its field, as a path id is: encoding/json alone
// reports uuid's parse error without the field.
func TestBadIDNamesItsField(t *testing.T) {
	for _, tc := range []struct {
		body, field string
		decode      func([]byte) error
	}{
		{`{"message":"hi","conversation_id":"xyz"}`, "conversation_id", askErr},
		{`{"message":"hi","pins":["` + someID + `","B"]}`, "pins", askErr},
		{`{"content":"ok","message_id":"nope"}`, "message_id", replyErr},
		// The nil UUID reads as "none": sent, it would quietly start a new conversation (or pick
		// the latest turn) instead of naming one.
		{`{"message":"hi","conversation_id":"00000000-0000-0000-0000-000000000000"}`, "conversation_id", askErr},
		{`{"content":"ok","message_id":"00000000-0000-0000-0000-000000000000"}`, "message_id", replyErr},
	} {
		err := tc.decode([]byte(tc.body))
		var in *ragd.InputError
		if !errors.As(err, &in) || in.Field != tc.field || !strings.Contains(err.Error(), "UUID") {
			t.Errorf("%s: got %v, want an input error of field %s about the UUID", tc.body, err, tc.field)
		}
	}
	// Errors encoding/json names itself keep their words.
	for body, want := range map[string]string{
		`{"message":`:           "body: invalid JSON: unexpected EOF",
		`{"message":"x","f":1}`: `body: invalid JSON: json: unknown field "f"`,
		`{"message":5}`:         "body: invalid JSON: json: cannot unmarshal number",
	} {
		if err := askErr([]byte(body)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %s...", body, err, want)
		}
	}
}

// mode_hint, and intent its old name, are words: over 64 bytes is a 400 naming the field given
// (a megabyte of one was accepted and ignored).
func TestModeHintIsBounded(t *testing.T) {
	long := strings.Repeat("d", MaxModeHintBytes+1)
	for field, body := range map[string]string{
		"mode_hint": `{"message":"x","mode_hint":"` + long + `"}`,
		"intent":    `{"message":"x","intent":"` + long + `"}`,
	} {
		var in *ragd.InputError
		if err := askErr([]byte(body)); !errors.As(err, &in) || in.Field != field || !strings.Contains(err.Error(), "64-byte limit") {
			t.Errorf("%s over the limit: got %v, want an input error of field %s", field, err, field)
		}
	}
	_, hint, err := DecodeAsk([]byte(`{"message":"x","mode_hint":"` + long[1:] + `"}`))
	if err != nil || hint != long[1:] {
		t.Errorf("a hint of %d bytes: got %q, %v", MaxModeHintBytes, hint, err)
	}
}

// An error repeats at most a few hundred bytes of the request: a deeply nested body holding a
// NUL echoed its whole path (a 1.5 MB error for a 0.5 MB body), an unknown field its whole name.
func TestErrorsEchoLittleOfTheBody(t *testing.T) {
	const depth = 150_000
	nested := strings.Repeat("[", depth) + `"\u0000"` + strings.Repeat("]", depth)
	for name, body := range map[string]string{
		"nested NUL":    `{"pins":` + nested + `}`,
		"unknown field": `{"message":"x","` + strings.Repeat("f", 500_000) + `":1}`,
		"long format":   `{"text":"t","format":"` + strings.Repeat("p", 500_000) + `"}`,
	} {
		decode := askErr
		if name == "long format" {
			decode = func(raw []byte) error { _, err := DecodeDocument(raw); return err }
		}
		err := decode([]byte(body))
		var in *ragd.InputError
		if !errors.As(err, &in) || len(err.Error()) > 1000 {
			t.Errorf("%s: got an error of %d bytes (%.80v), want an input error under 1000", name, len(fmt.Sprint(err)), err)
			continue
		}
		t.Logf("%s: %s", name, err)
	}
	var in *ragd.InputError
	if err := askErr([]byte(`{"pins":` + nested + `}`)); errors.As(err, &in) && !strings.HasPrefix(in.Field, "pins[0][0][0]") {
		t.Errorf("the cut path still starts as the field's: %q", in.Field)
	}
}

func askErr(raw []byte) error {
	_, _, err := DecodeAsk(raw)
	return err
}

func replyErr(raw []byte) error {
	_, _, err := DecodeReply(raw, 64)
	return err
}

// An upload's parts other than file and source, and either given twice, are refused naming the
// part: a misspelt source was dropped, so the document was identified by its content and a
// changed upload became a second document instead of a new version.
func TestUploadRefusesPartsItDoesNotRead(t *testing.T) {
	type part struct{ name, value string }
	upload := func(parts ...part) (Document, error) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for _, p := range parts {
			if p.name == "file" {
				fw, _ := w.CreateFormFile("file", "tea.txt")
				_, _ = fw.Write([]byte(p.value))
			} else {
				_ = w.WriteField(p.name, p.value)
			}
		}
		_ = w.Close()
		req := httptest.NewRequest(http.MethodPost, "/v1/documents", &buf)
		req.Header.Set("Content-Type", w.FormDataContentType())
		return ReadDocument(httptest.NewRecorder(), req, 1<<16)
	}
	d, err := upload(part{"file", "Green tea."}, part{"source", "tea"})
	if err != nil || d.Key != "tea" || string(d.Data) != "Green tea." {
		t.Fatalf("file and source: got %+v, %v", d, err)
	}
	for _, tc := range []struct {
		parts []part
		field string
	}{
		{[]part{{"file", "Green tea."}, {"sorce", "tea"}}, "sorce"},
		{[]part{{"file", "Green tea."}, {"title", "Tea"}}, "title"},
		{[]part{{"file", "Green tea."}, {"source", "tea"}, {"source", "tea2"}}, "source"},
		{[]part{{"file", "Green tea."}, {"file", "Black tea."}}, "file"},
	} {
		_, err := upload(tc.parts...)
		var in *ragd.InputError
		if !errors.As(err, &in) || in.Field != tc.field {
			t.Errorf("%v: got %v, want an input error of field %s", tc.parts, err, tc.field)
		}
	}
}
