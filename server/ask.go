package server

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd/ask"
)

const mimeEventStream = "text/event-stream"

// ask answers a user turn as JSON, or as Server-Sent Events when the client asks for them.
// The turn is validated, retrieved and recorded before the first byte is written, so a bad
// request or a failed turn is an ordinary problem response with its status; the stream carries
// what follows: meta, one event per source, the context bundle, answer deltas when an LLM is
// configured, done.
func (s *Server) ask(c echo.Context) error {
	format := accepts(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON, mimeEventStream)
	if format == "" {
		return echo.NewHTTPError(http.StatusNotAcceptable, "/v1/ask answers application/json or text/event-stream")
	}
	var req askRequest
	if err := decodeJSON(c, &req, s.cfg.MaxBodyBytes); err != nil {
		return err
	}
	hint, err := req.modeHint()
	if err != nil {
		return err
	}
	r := ask.Request{Message: req.Message, Pins: req.Pins, ModeHint: hint}
	if req.ConversationID != nil {
		r.ConversationID = *req.ConversationID
	}
	ctx := c.Request().Context()
	turn, err := s.deps.Pipeline.Ask(ctx, r)
	if err != nil {
		return err
	}
	s.metrics.turn(turn)
	if format == mimeEventStream {
		return s.stream(c, turn)
	}
	answer, phantoms, err := s.deps.Pipeline.Answer(ctx, turn, nil)
	if err != nil {
		// The turn is recorded; its fact sheet still answers. Say so rather than fail the turn.
		s.deps.Logger.ErrorContext(ctx, "answer generation failed; returning the fact sheet", slog.String("error", err.Error()))
		answer = turn.Answer
		turn.Skipped["answer"] = "the LLM failed: " + err.Error()
	}
	resp := askResponse{metaJSON: metaOf(turn), Answer: answer, Phantoms: phantoms, Context: contextOf(turn.Context),
		Sources: make([]sourceJSON, len(turn.Sources))}
	for i, src := range turn.Sources {
		resp.Sources[i] = sourceOf(src)
	}
	return c.JSON(http.StatusOK, resp)
}

// stream sends a recorded turn as typed events. A failure after the stream began is sent as an
// error event carrying a problem document, and ends the stream.
func (s *Server) stream(c echo.Context, turn *ask.Turn) error {
	// Commit the headers through Echo: go-sse would flush them underneath it, and Echo would then
	// write them a second time.
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, mimeEventStream)
	h.Set("Cache-Control", "no-cache")
	c.Response().WriteHeader(http.StatusOK)
	sess, err := sse.Upgrade(c.Response(), c.Request())
	if err != nil {
		return err
	}
	send := func(event string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		m := &sse.Message{Type: sse.Type(event)}
		m.AppendData(string(data))
		if err := sess.Send(m); err != nil {
			return err
		}
		return sess.Flush()
	}
	ctx := c.Request().Context()
	fail := func(err error) error {
		status, detail := statusOf(err)
		s.deps.Logger.ErrorContext(ctx, "ask stream failed", slog.String("error", err.Error()))
		_ = send("error", problemOf(status, detail))
		return nil // the response is committed: nothing more to write
	}
	if err := send("meta", metaOf(turn)); err != nil {
		return fail(err)
	}
	for _, src := range turn.Sources {
		if err := send("source", sourceOf(src)); err != nil {
			return fail(err)
		}
	}
	if err := send("context", contextOf(turn.Context)); err != nil {
		return fail(err)
	}
	answer, phantoms, err := s.deps.Pipeline.Answer(ctx, turn, func(delta string) error {
		return send("answer", map[string]string{"delta": delta})
	})
	if err != nil {
		return fail(err)
	}
	if err := send("done", doneJSON{Answer: answer, Phantoms: phantoms, Timings: timingsOf(turn.Timings)}); err != nil {
		s.deps.Logger.WarnContext(ctx, "client left before the end of the stream", slog.String("error", err.Error()))
	}
	return nil
}
