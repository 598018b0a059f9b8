package request

import (
	"errors"
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

func askErr(raw []byte) error {
	_, _, err := DecodeAsk(raw)
	return err
}

func replyErr(raw []byte) error {
	_, _, err := DecodeReply(raw, 64)
	return err
}
