package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	sse "github.com/tmaxmax/go-sse"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/request"
)

// ask answers a user turn as JSON, or as Server-Sent Events when the client asks for them.
// The turn is validated, retrieved and recorded before the first byte is written, so a bad
// request or a failed turn is an ordinary problem response with its status; the stream carries
// what follows: meta, one event per source, the context bundle, answer deltas when an LLM is
// configured, done (or stopped). With an Idempotency-Key, a retry gets the first turn back.
func (s *Server) ask(c echo.Context) error {
	format := request.Accepts(c.Request().Header.Get(echo.HeaderAccept), request.MIMEJSON, request.MIMEEventStream)
	if format == "" {
		return echo.NewHTTPError(http.StatusNotAcceptable, "/v1/ask answers application/json or text/event-stream")
	}
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	req, hint, err := request.DecodeAsk(raw)
	if err != nil {
		return err
	}
	r := ask.Request{Message: req.Message, Pins: req.Pins, ModeHint: hint}
	if req.ConversationID != nil {
		r.ConversationID = *req.ConversationID
	}
	if r.Idempotency, err = request.Idempotency(c.Request().Header, req, hint); err != nil {
		return err
	}
	if r.Idempotency != nil {
		if done, err := s.replay(c, format, r.Idempotency); done || err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	turn, err := s.deps.Pipeline.Ask(ctx, r)
	if err != nil && r.Idempotency != nil && errors.Is(err, ragd.ErrConflict) {
		// Another request with the key recorded its turn first: answer as its retry.
		if done, rerr := s.replay(c, format, r.Idempotency); done || rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	s.metrics.turn(turn)
	var resp askResponse
	if format == request.MIMEEventStream {
		resp = s.stream(c, turn)
	} else {
		resp = s.answerJSON(c, turn)
	}
	if r.Idempotency != nil {
		s.keepResponse(ctx, r.Idempotency.Key, resp)
	}
	return nil
}

// responseOf is a turn's whole response, with its answer.
func responseOf(turn *ask.Turn, answer string, phantoms []string) askResponse {
	resp := askResponse{metaJSON: metaOf(turn), Answer: answer, Phantoms: phantoms, Context: contextOf(turn.Context),
		Sources: make([]sourceJSON, len(turn.Sources))}
	for i, src := range turn.Sources {
		resp.Sources[i] = sourceOf(src)
	}
	return resp
}

// answerJSON answers a recorded turn in one JSON document.
func (s *Server) answerJSON(c echo.Context, turn *ask.Turn) askResponse {
	ctx := c.Request().Context()
	answer, phantoms, err := s.deps.Pipeline.Answer(ctx, turn, nil)
	if err != nil && ctx.Err() != nil {
		// The client left while the LLM was answering: nothing of the answer was sent.
		resp := responseOf(turn, "", nil)
		resp.Stopped = true
		s.recordStop(ctx, turn, "", "the client closed the connection")
		return resp
	}
	if err != nil {
		// The turn is recorded; its fact sheet still answers. Say so rather than fail the turn.
		// The upstream's error text stays in the log: it may echo a URL or a credential.
		s.deps.Logger.ErrorContext(ctx, "answer generation failed; returning the fact sheet", slog.String("error", err.Error()))
		answer = turn.Answer
		status, _ := statusOf(err)
		turn.Skipped["answer"] = fmt.Sprintf("the LLM failed (%d %s): the fact sheet answers instead", status, http.StatusText(status))
	}
	resp := responseOf(turn, answer, phantoms)
	if err := c.JSON(http.StatusOK, resp); err != nil {
		s.deps.Logger.InfoContext(ctx, "client left before the answer was written", slog.String("error", err.Error()))
	}
	return resp
}

// stream sends a recorded turn as typed events and returns what it sent. A failure after the
// stream began is sent as an error event carrying a problem document, and ends the stream. A
// stop (the client closing the connection, or POST /v1/messages/{id}/stop) is not a failure:
// the turn is recorded as stopped with the answer as far as it was sent.
func (s *Server) stream(c echo.Context, turn *ask.Turn) askResponse {
	ctx, live := s.streams.start(c.Request().Context(), turn.AssistantMessageID)
	defer live.end()
	resp := responseOf(turn, "", nil)
	ev, err := openEvents(c)
	if err != nil {
		s.deps.Logger.ErrorContext(ctx, "ask stream failed", slog.String("error", err.Error()))
		return resp
	}
	send := ev.send
	var sent strings.Builder
	stop := func() askResponse {
		reason := "the client closed the connection"
		if errors.Is(context.Cause(ctx), errStopRequested) {
			reason = "stop requested"
			// The connection is still open: tell the client where the answer ends.
			_ = send("stopped", stoppedJSON{Answer: sent.String(), Reason: reason})
		}
		resp.Answer, resp.Stopped = sent.String(), true
		if !s.deps.Pipeline.CanAnswer() {
			resp.Answer = turn.Answer
		}
		s.recordStop(ctx, turn, sent.String(), reason)
		return resp
	}
	fail := func(err error) askResponse {
		if ctx.Err() != nil || ev.gone {
			return stop()
		}
		status, detail := statusOf(err)
		s.deps.Logger.ErrorContext(ctx, "ask stream failed", slog.String("error", err.Error()))
		_ = send("error", problemOf(status, detail))
		return resp
	}
	if err := send("meta", metaOf(turn)); err != nil {
		return fail(err)
	}
	for _, src := range turn.Sources {
		if ctx.Err() != nil {
			return stop()
		}
		if err := send("source", sourceOf(src)); err != nil {
			return fail(err)
		}
	}
	if err := send("context", contextOf(turn.Context)); err != nil {
		return fail(err)
	}
	answer, phantoms, err := s.deps.Pipeline.Answer(ctx, turn, func(delta string) error {
		if err := send("answer", map[string]string{"delta": delta}); err != nil {
			return err
		}
		sent.WriteString(delta)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	resp.Answer, resp.Phantoms = answer, phantoms
	if ctx.Err() != nil && !s.deps.Pipeline.CanAnswer() {
		// No LLM: the answer is the fact sheet, whose facts went out with the sources.
		return stop()
	}
	if err := send("done", doneJSON{Answer: answer, Phantoms: phantoms, Timings: timingsOf(turn.Timings)}); err != nil {
		s.deps.Logger.InfoContext(ctx, "client left before the end of the stream", slog.String("error", err.Error()))
	}
	return resp
}

// events writes Server-Sent Events.
type events struct {
	sess *sse.Session
	gone bool // a write failed: only a closed connection makes writes fail
}

func openEvents(c echo.Context) (*events, error) {
	// Commit the headers through Echo: go-sse would flush them underneath it, and Echo would then
	// write them a second time.
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, request.MIMEEventStream)
	h.Set("Cache-Control", "no-cache")
	c.Response().WriteHeader(http.StatusOK)
	sess, err := sse.Upgrade(c.Response(), c.Request())
	if err != nil {
		return nil, err
	}
	return &events{sess: sess}, nil
}

func (e *events) send(event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m := &sse.Message{Type: sse.Type(event)}
	m.AppendData(string(data))
	if err = e.sess.Send(m); err == nil {
		err = e.sess.Flush()
	}
	e.gone = e.gone || err != nil
	return err
}

// replayStream sends a recorded response as the events of a stream: meta, the sources, the
// context, then done (or stopped) with the whole answer.
func (s *Server) replayStream(c echo.Context, resp askResponse) error {
	ev, err := openEvents(c)
	if err != nil {
		return err
	}
	_ = ev.send("meta", resp.metaJSON)
	for _, src := range resp.Sources {
		_ = ev.send("source", src)
	}
	_ = ev.send("context", resp.Context)
	if resp.Stopped {
		_ = ev.send("stopped", stoppedJSON{Answer: resp.Answer, Reason: "stopped the first time"})
	} else {
		_ = ev.send("done", doneJSON{Answer: resp.Answer, Phantoms: resp.Phantoms, Timings: resp.Timings})
	}
	return nil
}

// recordStop records a stopped turn. With an LLM, its answer is what was sent of the LLM's
// answer; without one it stays the fact sheet. It runs even though the request's context is
// done: the client leaving is what it records.
func (s *Server) recordStop(ctx context.Context, turn *ask.Turn, sent string, reason string) {
	var answer *string
	if s.deps.Pipeline.CanAnswer() {
		answer = &sent
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := s.deps.Store.StopAnswer(ctx, turn.AssistantMessageID, answer); err != nil {
		s.deps.Logger.ErrorContext(ctx, "recording a stopped answer failed", slog.String("message", turn.AssistantMessageID.String()),
			slog.String("error", err.Error()))
		return
	}
	s.deps.Logger.InfoContext(ctx, "answer stream stopped", slog.String("message", turn.AssistantMessageID.String()),
		slog.String("reason", reason), slog.Int("sent_bytes", len(sent)))
}
