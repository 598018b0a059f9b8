package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// errStopRequested is the cause of a stream's cancellation by POST /v1/messages/{id}/stop.
var errStopRequested = errors.New("stop requested")

// streams are the answer streams this process is sending, by assistant message, so a stop
// request can end one.
type streams struct {
	mu   sync.Mutex
	live map[uuid.UUID]*liveStream
}

type liveStream struct {
	s      *streams
	id     uuid.UUID
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the stream recorded how it ended
}

// start registers the stream of msg and returns the context it runs in.
func (s *streams) start(parent context.Context, msg uuid.UUID) (context.Context, *liveStream) {
	ctx, cancel := context.WithCancelCause(parent)
	l := &liveStream{s: s, id: msg, cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[uuid.UUID]*liveStream{}
	}
	s.live[msg] = l
	return ctx, l
}

func (l *liveStream) end() {
	l.s.mu.Lock()
	delete(l.s.live, l.id)
	l.s.mu.Unlock()
	l.cancel(nil)
	close(l.done)
}

// cancel stops the stream of msg, if this process sends it, and returns it.
func (s *streams) cancel(msg uuid.UUID) *liveStream {
	s.mu.Lock()
	l := s.live[msg]
	s.mu.Unlock()
	if l != nil {
		l.cancel(errStopRequested)
	}
	return l
}

// stop cancels the stream of msg and waits until it has recorded the stop. It reports false
// when no stream of msg runs in this process.
func (s *streams) stop(ctx context.Context, msg uuid.UUID) (bool, error) {
	l := s.cancel(msg)
	if l == nil {
		return false, nil
	}
	select {
	case <-l.done:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// remoteStopWait is how long a stop request waits for another replica to record the stop: that
// takes milliseconds, so past it no replica streams the answer.
const remoteStopWait = 2 * time.Second

// StopStream stops the answer stream of msg if this process sends it: for a stop another replica
// was asked for (the store's ListenStops). The stream records the stop.
func (s *Server) StopStream(msg uuid.UUID) { s.streams.cancel(msg) }

// stopAnswer stops the answer stream of an assistant message: the turn is recorded as stopped,
// its answer what had been sent, and the stream ends with a stopped event. Stopping a stopped
// message returns it as it is.
func (s *Server) stopAnswer(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	m, err := s.deps.Store.Message(ctx, id)
	if err != nil {
		return err
	}
	if m.Role != "assistant" {
		return ragd.Invalidf("id", "message %s is the user's; stop the assistant message of its turn", id)
	}
	// As with its reply and its rating, only the key that asked the turn (or an admin) stops
	// it: a stop also cuts the answer the turn records.
	if p := ragd.PrincipalOf(ctx); p.Role != ragd.RoleAdmin && m.KeyID != nil && *m.KeyID != p.KeyID {
		return fmt.Errorf("the answer of turn %d can be stopped only by the key that asked it: %w", m.Turn, ragd.ErrForbidden)
	}
	if m.StoppedAt == nil {
		found, err := s.streams.stop(ctx, id)
		if err == nil && !found {
			// Another replica may stream it.
			found, err = s.deps.Store.RequestStop(ctx, id, remoteStopWait)
		}
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("the answer of message %s is not streaming (it finished, or the client left): %w", id, ragd.ErrConflict)
		}
		if m, err = s.deps.Store.Message(ctx, id); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, messageOf(*m))
}
