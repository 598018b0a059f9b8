package server

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/request"
)

// conversation returns a conversation with its messages and the sources it has found.
func (s *Server) conversation(c echo.Context) error {
	id, st, msgs, err := s.conversationRead(c)
	if err != nil {
		return err
	}
	out := conversationJSON{ID: id, Title: st.Conversation.Title, Turn: st.Conversation.Turn, GoalTurn: st.Conversation.GoalTurn, CreatedAt: st.Conversation.CreatedAt,
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
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	content, msg, err := request.DecodeReply(raw, s.cfg.MaxReplyBytes)
	if err != nil {
		return err
	}
	m, err := s.deps.Store.RecordReply(c.Request().Context(), id, msg, content)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, messageOf(*m))
}

// conversationSources lists the documents a conversation has found, with their carry-over
// state and why each is (or stopped being) carried, and what the conversation is about (its
// focus).
func (s *Server) conversationSources(c echo.Context) error {
	id, st, msgs, err := s.conversationRead(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := s.deps.Pipeline.Focus(ctx, st, msgs)
	if err != nil {
		return err
	}
	out := make([]conversationSourceJSON, len(st.Sources))
	for i, cs := range st.Sources {
		out[i] = conversationSourceOf(cs)
	}
	terms := f.Terms
	if terms == nil {
		terms = []focus.Term{}
	}
	return c.JSON(http.StatusOK, map[string]any{"conversation_id": id, "sources": out,
		"focus": map[string]any{"turn": f.Turn, "terms": terms}})
}

// pin pins a document in a conversation: carried into every later turn, never decayed. A new
// pin is 201, a pin that was there already 200.
func (s *Server) pin(c echo.Context) error { return s.setPin(c, true) }

// unpin removes a pin; the source decays from then on like any other.
func (s *Server) unpin(c echo.Context) error { return s.setPin(c, false) }

func (s *Server) setPin(c echo.Context, pinned bool) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	doc, err := pathUUID(c, "doc_id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if pinned {
		st, err := s.deps.Store.ConversationState(ctx, id)
		if err != nil {
			return err
		}
		if err := ask.PinLimit(st.Sources, []uuid.UUID{doc}, s.cfg.MaxPins); err != nil {
			return err
		}
	}
	cs, created, err := s.deps.Store.SetPin(ctx, id, doc, pinned, citations.Letter)
	if err != nil {
		return err
	}
	status := http.StatusOK // PUT is idempotent: pinning a pinned document again changes nothing
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, conversationSourceOf(*cs))
}

// listConversations lists the conversations that are not deleted, most recently active first.
func (s *Server) listConversations(c echo.Context) error {
	if err := request.Only(c.QueryParams(), "limit", "cursor"); err != nil {
		return err
	}
	p, limit, err := request.Page(c.QueryParams())
	if err != nil {
		return err
	}
	rows, err := s.deps.Store.ListConversations(c.Request().Context(), p)
	if err != nil {
		return err
	}
	rows, next := request.NextCursor(rows, limit, func(cs ragd.ConversationSummary) (time.Time, uuid.UUID) { return cs.UpdatedAt, cs.ID })
	out := conversationListJSON{Conversations: make([]conversationSummaryJSON, len(rows)), NextCursor: next}
	for i, cs := range rows {
		out.Conversations[i] = conversationSummaryOf(cs.Conversation, cs.Preview)
	}
	return c.JSON(http.StatusOK, out)
}

// renameConversation sets a conversation's title; an empty title clears it.
func (s *Server) renameConversation(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	title, err := request.DecodeRename(raw)
	if err != nil {
		return err
	}
	conv, err := s.deps.Store.RenameConversation(c.Request().Context(), id, title)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conversationSummaryOf(*conv, ""))
}

// deleteConversation hides a conversation from chat. Its messages and citations stay for
// auditors (GET /v1/messages/{id}/citations, GET /v1/citations).
func (s *Server) deleteConversation(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteConversation(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// conversationRead reads the conversation of the request's path: its state and its messages.
func (s *Server) conversationRead(c echo.Context) (uuid.UUID, *ragd.ConversationState, []ragd.Message, error) {
	id, err := pathID(c)
	if err != nil {
		return uuid.Nil, nil, nil, err
	}
	ctx := c.Request().Context()
	st, err := s.deps.Store.ConversationState(ctx, id)
	if err != nil {
		return id, nil, nil, err
	}
	msgs, err := s.deps.Store.Messages(ctx, id)
	return id, st, msgs, err
}
