package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
)

// conversation returns a conversation with its messages and the sources it has found.
func (s *Server) conversation(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	st, err := s.deps.Store.ConversationState(ctx, id)
	if err != nil {
		return err
	}
	msgs, err := s.deps.Store.Messages(ctx, id)
	if err != nil {
		return err
	}
	out := conversationJSON{ID: id, Turn: st.Conversation.Turn, CreatedAt: st.Conversation.CreatedAt,
		UpdatedAt: st.Conversation.UpdatedAt, Messages: make([]messageJSON, len(msgs)),
		Sources: make([]conversationSourceJSON, len(st.Sources))}
	for i, m := range msgs {
		out.Messages[i] = messageOf(m)
	}
	for i, cs := range st.Sources {
		out.Sources[i] = conversationSourceOf(cs)
	}
	return c.JSON(http.StatusOK, out)
}

// recordReply records the reply the chat UI showed for a turn (by default the latest).
func (s *Server) recordReply(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	var req replyRequest
	if err := decodeJSON(c, &req, s.cfg.MaxBodyBytes); err != nil {
		return err
	}
	content := strings.TrimSpace(req.Content)
	switch {
	case content == "":
		return ragd.Invalidf("content", "is empty")
	case len(content) > s.cfg.MaxReplyBytes:
		return ragd.Invalidf("content", "is %d bytes, over the %d-byte limit", len(content), s.cfg.MaxReplyBytes)
	case !utf8.ValidString(content):
		return ragd.Invalidf("content", "is not valid UTF-8")
	}
	msg := uuid.Nil
	if req.MessageID != nil {
		msg = *req.MessageID
	}
	m, err := s.deps.Store.RecordReply(c.Request().Context(), id, msg, content)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, messageOf(*m))
}
