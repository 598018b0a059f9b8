package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// headerIdempotencyKey names the key a client sends to make /v1/ask safe to retry; a replayed
// response carries headerReplayed.
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotent-Replayed"
	maxIdempotencyKey    = 255
)

// idempotencyOf reads the request's Idempotency-Key, if any, with the hash of what it asks: the
// conversation, the message, the mode hint and the pins (not the response format, so a retry may
// ask for JSON what it first asked as a stream).
func idempotencyOf(c echo.Context, req askRequest, hint string) (*ragd.Idempotency, error) {
	key, ok := c.Request().Header[headerIdempotencyKey]
	if !ok {
		return nil, nil
	}
	if len(key) != 1 || key[0] == "" || len(key[0]) > maxIdempotencyKey {
		return nil, ragd.Invalidf(headerIdempotencyKey, "must be one value of 1 to %d characters", maxIdempotencyKey)
	}
	for _, r := range key[0] {
		if r < 0x21 || r > 0x7e {
			return nil, ragd.Invalidf(headerIdempotencyKey, "must be printable ASCII without spaces")
		}
	}
	canon, err := json.Marshal(struct {
		ConversationID any    `json:"c"`
		Message        string `json:"m"`
		ModeHint       string `json:"h"`
		Pins           any    `json:"p"`
	}{req.ConversationID, req.Message, hint, req.Pins})
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(canon)
	return &ragd.Idempotency{Key: key[0], RequestHash: h[:]}, nil
}

// replay answers a request whose key made a turn already: the first turn's response, in the
// format asked for. It reports false when the key is new.
func (s *Server) replay(c echo.Context, format string, k *ragd.Idempotency) (bool, error) {
	first, err := s.deps.Store.IdempotentTurn(c.Request().Context(), k.Key)
	if errors.Is(err, ragd.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !bytes.Equal(first.RequestHash, k.RequestHash) {
		return true, echo.NewHTTPError(http.StatusUnprocessableEntity,
			"this Idempotency-Key was used for a different request (conversation, message, mode hint or pins differ): use a new key")
	}
	if first.Response == nil {
		return true, echo.NewHTTPError(http.StatusConflict,
			"the first request with this Idempotency-Key is still being answered: retry when it ends")
	}
	c.Response().Header().Set(headerReplayed, "true")
	if format != mimeEventStream {
		return true, c.JSONBlob(http.StatusOK, first.Response)
	}
	var resp askResponse
	if err := json.Unmarshal(first.Response, &resp); err != nil {
		return true, err
	}
	return true, s.replayStream(c, resp)
}

// keepResponse stores a turn's complete response for retries with its key. A failure is logged:
// the turn itself is recorded, and a retry is answered 409 rather than with a second turn.
func (s *Server) keepResponse(ctx context.Context, key string, resp askResponse) {
	ctx = context.WithoutCancel(ctx)
	b, err := json.Marshal(resp)
	if err == nil {
		err = s.deps.Store.SaveIdempotentResponse(ctx, key, b)
	}
	if err != nil {
		s.deps.Logger.ErrorContext(ctx, "keeping the response of an idempotent request failed", slog.String("error", err.Error()))
	}
}
