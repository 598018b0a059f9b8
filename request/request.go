// Package request decodes and validates what clients send the HTTP API: each route's JSON body
// or multipart upload, its query parameters, path ids and headers. Server handlers stay thin
// (read, decode here, call, encode); keeping the decoders apart, with few dependencies, is also
// what makes fuzzing them cheap: a fuzzer rebuilds its package's whole dependency tree with
// coverage instrumentation, minutes for this package against a quarter of an hour for the server.
//
// Errors a client caused are ragd.ErrInvalid (400, naming the field), *Error (another 4xx) or
// *http.MaxBytesError (413).
package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
)

// Media types the API reads and writes.
const (
	MIMEJSON        = "application/json"
	MIMEMultipart   = "multipart/form-data"
	MIMEEventStream = "text/event-stream"
	MIMEJSONL       = "application/x-ndjson"
	MIMECSV         = "text/csv"
)

// Error is a request refused with a status of its own (415, 406): what is wrong is not one
// field's value.
type Error struct {
	Status int
	Detail string
}

func (e *Error) Error() string { return e.Detail }

// Body reads a JSON request body of at most limit bytes (more is a *http.MaxBytesError), sent
// as application/json.
func Body(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != MIMEJSON {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Detail: "send the body as application/json"}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}

// Decode reads one JSON object into v, refusing unknown fields (a misspelt field is a client bug
// better reported than ignored), trailing data, and text that no store keeps: invalid UTF-8
// (which encoding/json would silently turn into U+FFFD) and NUL characters, each reported with
// the field that holds it.
func Decode(raw []byte, v any) error {
	if err := checkJSONText(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &syntax) && !errors.As(err, &typ) && !strings.HasPrefix(err.Error(), "json: ") {
			// A value's own decoder refused it (uuid's, for an id): encoding/json does not say
			// which field held it.
			if field := fieldOf(raw, v); field != "" {
				return invalidf(field, "%v", err)
			}
		}
		return invalidf("body", "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidf("body", "invalid JSON: more than one value")
	}
	return nil
}

// fieldOf returns the first field, in name order, of the JSON object raw that fails to decode
// into v's type on its own, or "" when raw is not an object or none fails alone. It runs only on
// a refused body.
func fieldOf(raw []byte, v any) string {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		one, err := json.Marshal(map[string]json.RawMessage{name: fields[name]})
		if err == nil && json.Unmarshal(one, reflect.New(t.Elem()).Interface()) != nil {
			return name
		}
	}
	return ""
}

// checkJSONText walks the tokens of a JSON document and refuses the first key or string that is
// not valid UTF-8 in the raw bytes, or holds a NUL once decoded, naming the field by its path
// ("pins[2]", "meta.title"). Syntax errors are left for the decoder to report.
func checkJSONText(raw []byte) error {
	if utf8.Valid(raw) && !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil // the common case: nothing to find
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		array bool
		key   string
		index int
		isKey bool // the next string in an object is a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.array:
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			case f.key != "":
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		if b.Len() == 0 {
			return "body"
		}
		return b.String()
	}
	// advance moves the enclosing container past one value.
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].isKey = true
			}
		}
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // EOF or a syntax error, which the decoder reports
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{isKey: true})
			case '[':
				stack = append(stack, frame{array: true})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			n := len(stack)
			if n > 0 && !stack[n-1].array && stack[n-1].isKey {
				stack[n-1].key, stack[n-1].isKey = "", false
				if !utf8.Valid(raw[start:end]) || strings.ContainsRune(t, 0) {
					return invalidf(path(), "a field name is not valid UTF-8 or holds a NUL character")
				}
				stack[n-1].key = t
				continue
			}
			if !utf8.Valid(raw[start:end]) {
				return invalidf(path(), "is not valid UTF-8")
			}
			if strings.ContainsRune(t, 0) {
				return invalidf(path(), "holds a NUL character")
			}
			advance()
		default:
			advance()
		}
	}
}

// maxEcho bounds what an error repeats of a request: a field's path and each value it quotes.
// A deeply nested body holding a NUL echoed its whole path, a 1.5 MB error for a 0.5 MB body.
const maxEcho = 256

// invalidf is ragd.Invalidf with the field and each string or error argument cut to maxEcho
// bytes. Every error of this package that names a field is made by it.
func invalidf(field, format string, args ...any) error {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = clip(v)
		case error:
			args[i] = clip(v.Error())
		}
	}
	return ragd.Invalidf(clip(field), format, args...)
}

// clip cuts s to at most maxEcho bytes, on a rune boundary, saying how long it was.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Text refuses a form value that is not valid UTF-8 or holds a NUL, naming its field.
func Text(field, s string) error {
	switch {
	case !utf8.ValidString(s):
		return invalidf(field, "is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		return invalidf(field, "holds a NUL character")
	}
	return nil
}

// ID parses the path parameter name, whose value is s, as a UUID.
func ID(name, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, invalidf(name, "%q is not a UUID", s)
	}
	return id, nil
}
