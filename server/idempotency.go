package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/request"
)

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
	c.Response().Header().Set(request.HeaderReplayed, "true")
	if format != request.MIMEEventStream {
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
