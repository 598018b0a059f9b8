package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/focus"
)

const conversationColumns = `id, title, turn, next_letter, goal_turn, coalesce(ab_arm, ''), created_at, updated_at`

// scanConversation reads conversationColumns, then the extra columns a query selects after them.
func scanConversation(row pgx.Row, extra ...any) (ragd.Conversation, error) {
	var c ragd.Conversation
	err := row.Scan(append([]any{&c.ID, &c.Title, &c.Turn, &c.NextLetter, &c.GoalTurn, &c.ABArm, &c.CreatedAt, &c.UpdatedAt}, extra...)...)
	return c, err
}

// Conversation returns a conversation by id. A deleted conversation is not found: deletion
// hides it from chat; its messages and citations stay for auditors.
func (s *Store) Conversation(ctx context.Context, id uuid.UUID) (*ragd.Conversation, error) {
	c, err := scanConversation(s.db.QueryRow(ctx, "SELECT "+conversationColumns+" FROM conversations WHERE id = $1 AND deleted_at IS NULL AND tenant_id = $2", id, tenantOf(ctx)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("conversation %s: %w", id, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading conversation %s: %w", id, err)
	}
	return &c, nil
}

// ConversationState reads a conversation and its sources without locking, for the retrieval
// stages that run before the turn's transaction.
func (s *Store) ConversationState(ctx context.Context, id uuid.UUID) (*ragd.ConversationState, error) {
	return s.conversationState(ctx, id, false)
}

func (s *Store) conversationState(ctx context.Context, id uuid.UUID, lock bool) (*ragd.ConversationState, error) {
	q := "SELECT " + conversationColumns + ", focus, invariants FROM conversations WHERE id = $1 AND deleted_at IS NULL AND tenant_id = $2"
	if lock {
		q += " FOR UPDATE"
	}
	var f focus.Focus
	var sticky []byte
	c, err := scanConversation(s.db.QueryRow(ctx, q, id, tenantOf(ctx)), &f, &sticky)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("conversation %s: %w", id, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading conversation %s: %w", id, err)
	}
	srcs, err := s.conversationSources(ctx, id)
	if err != nil {
		return nil, err
	}
	markers, err := s.sentenceMarkers(ctx, id)
	if err != nil {
		return nil, err
	}
	caps, err := s.capsules(ctx, id)
	if err != nil {
		return nil, err
	}
	return &ragd.ConversationState{Conversation: c, Sources: srcs, Markers: markers, Capsules: caps, Focus: f, Sticky: sticky}, nil
}

func (s *Store) conversationSources(ctx context.Context, id uuid.UUID) ([]ragd.ConversationSource, error) {
	rows, err := s.db.Query(ctx, `
		SELECT doc_id, marker, carry_score, pinned, carried, inactive_turns, first_turn, last_turn,
		       last_used_at, cited_chunk_ids, facts, reason,
		       EXISTS (SELECT 1 FROM documents d WHERE d.id = conversation_sources.doc_id AND d.deleted_at IS NOT NULL)
		FROM conversation_sources WHERE conversation_id = $1
		ORDER BY first_turn, marker`, id)
	if err != nil {
		return nil, fmt.Errorf("store: reading sources of %s: %w", id, err)
	}
	srcs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ragd.ConversationSource, error) {
		var cs ragd.ConversationSource
		var facts []byte
		err := row.Scan(&cs.DocID, &cs.Marker, &cs.CarryScore, &cs.Pinned, &cs.Carried, &cs.InactiveTurns,
			&cs.FirstTurn, &cs.LastTurn, &cs.LastUsedAt, &cs.CitedChunkIDs, &facts, &cs.Reason, &cs.Deleted)
		if err == nil {
			err = json.Unmarshal(facts, &cs.Facts)
		}
		return cs, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reading sources of %s: %w", id, err)
	}
	return srcs, nil
}

// Turn records one turn in one transaction: the conversation row is locked, fn computes what to
// write from the state as of the lock (so two concurrent turns of one conversation apply one after
// the other), and the messages, citations, sources and counters are written; any failure leaves
// the conversation exactly as it was. The turn number fn writes is state.Conversation.Turn + 1.
func (s *Store) Turn(ctx context.Context, ref ragd.ConversationRef, fn func(*ragd.ConversationState) (*ragd.TurnWrite, error)) (*ragd.TurnResult, error) {
	var res *ragd.TurnResult
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		res, err = tx.turn(ctx, ref, fn)
		return err
	})
	return res, err
}

func (s *Store) turn(ctx context.Context, ref ragd.ConversationRef, fn func(*ragd.ConversationState) (*ragd.TurnWrite, error)) (*ragd.TurnResult, error) {
	var st *ragd.ConversationState
	if ref.New {
		c, err := s.createConversation(ctx, ref.ID, ref.Arm)
		if err != nil {
			return nil, err
		}
		st = &ragd.ConversationState{Conversation: c}
	} else {
		var err error
		if st, err = s.conversationState(ctx, ref.ID, true); err != nil {
			return nil, err
		}
	}
	w, err := fn(st)
	if err != nil {
		return nil, err
	}
	conv := st.Conversation
	conv.Turn++
	conv.NextLetter = w.NextLetter
	if w.GoalTurn > 0 {
		conv.GoalTurn = w.GoalTurn
	}
	res := &ragd.TurnResult{}
	if res.UserMessageID, err = uuid.NewV7(); err != nil {
		return nil, err
	}
	if res.AssistantMessageID, err = uuid.NewV7(); err != nil {
		return nil, err
	}
	meta, err := json.Marshal(nonNilMeta(w.Meta))
	if err != nil {
		return nil, fmt.Errorf("store: turn meta: %w", err)
	}
	userMeta, err := json.Marshal(nonNilMeta(w.UserMeta))
	if err != nil {
		return nil, fmt.Errorf("store: turn meta: %w", err)
	}
	ts := now()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO messages (id, conversation_id, turn, role, content, meta, created_at) VALUES ($1, $2, $3, 'user', $4, $5, $6)`,
		res.UserMessageID, conv.ID, conv.Turn, w.UserMessage, userMeta, ts)
	b.Queue(`INSERT INTO messages (id, conversation_id, turn, role, answer, meta, created_at) VALUES ($1, $2, $3, 'assistant', $4, $5, $6)`,
		res.AssistantMessageID, conv.ID, conv.Turn, w.Answer, meta, ts)
	if k := w.Idempotency; k != nil {
		// An expired key may be used again; and each new key prunes a few expired ones, so the
		// table holds about a day of keys without a job of its own.
		b.Queue(`DELETE FROM idempotency_keys WHERE key IN (
			SELECT key FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, ts.Add(-IdempotencyTTL), idempotencyPrune)
		b.Queue(`DELETE FROM idempotency_keys WHERE key = $1 AND created_at < $2`, k.Key, ts.Add(-IdempotencyTTL))
		b.Queue(`INSERT INTO idempotency_keys (key, request_hash, conversation_id, message_id, created_at) VALUES ($1, $2, $3, $4, $5)`,
			k.Key, k.RequestHash, conv.ID, res.AssistantMessageID, ts)
	}
	if err := queueSources(b, conv.ID, w.Sources); err != nil {
		return nil, err
	}
	queueMarkers(b, conv.ID, conv.Turn, w.Markers)
	queueCitations(b, res.AssistantMessageID, conv.ID, w.Citations, ts)
	queueCapsules(b, conv.ID, w.Capsules, ts)
	var sticky any // nil keeps the column as it is
	if w.Sticky != nil {
		sticky = string(w.Sticky)
	}
	b.Queue(`UPDATE conversations SET turn = $2, next_letter = $3, goal_turn = $4, updated_at = $5,
		focus = coalesce($6, focus), invariants = coalesce($8::jsonb, invariants) WHERE id = $1 AND tenant_id = $7`,
		conv.ID, conv.Turn, conv.NextLetter, conv.GoalTurn, ts, w.Focus, tenantOf(ctx), sticky)
	if err := s.db.SendBatch(ctx, b).Close(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.ConstraintName == "idempotency_keys_pkey" {
			return nil, fmt.Errorf("idempotency key %q was used by another request meanwhile: %w", w.Idempotency.Key, ragd.ErrConflict)
		}
		return nil, fmt.Errorf("store: recording turn %d of %s: %w", conv.Turn, conv.ID, err)
	}
	conv.UpdatedAt = ts
	res.Conversation = conv
	return res, nil
}

// queueSources writes the conversation's sources in one statement (a statement each cost
// PostgreSQL a round of planning and executing per source, about ten a turn): new ones are
// inserted, known ones updated, in their order. A document listed twice ends as its last entry
// says, first seen in the first one's turn, as one upsert after another would leave it.
// The values reach the columns as they did one row at a time: scores as real (pgx rounds them to
// float32, as it did for the column), cited chunk ids as bigint array literals (the lists differ
// in length, so they cannot be one two-dimensional array), facts as the JSON text jsonb parses.
func queueSources(b *pgx.Batch, conv uuid.UUID, srcs []ragd.ConversationSource) error {
	if len(srcs) == 0 {
		return nil
	}
	at := make(map[uuid.UUID]int, len(srcs))
	var rows []ragd.ConversationSource
	for _, src := range srcs {
		if i, ok := at[src.DocID]; ok {
			first := rows[i].FirstTurn
			rows[i] = src
			rows[i].FirstTurn = first
			continue
		}
		at[src.DocID] = len(rows)
		rows = append(rows, src)
	}
	n := len(rows)
	docs, markers, reasons := make([]uuid.UUID, n), make([]string, n), make([]string, n)
	scores := make([]float64, n)
	pinned, carried := make([]bool, n), make([]bool, n)
	inactive, first, last := make([]int, n), make([]int, n), make([]int, n)
	used := make([]time.Time, n)
	cited, facts := make([]string, n), make([]string, n)
	for i, src := range rows {
		f, err := json.Marshal(nonNilFacts(src.Facts))
		if err != nil {
			return fmt.Errorf("store: source facts: %w", err)
		}
		docs[i], markers[i], reasons[i] = src.DocID, src.Marker, src.Reason
		scores[i], pinned[i], carried[i] = src.CarryScore, src.Pinned, src.Carried
		inactive[i], first[i], last[i], used[i] = src.InactiveTurns, src.FirstTurn, src.LastTurn, src.LastUsedAt
		cited[i], facts[i] = int64Array(src.CitedChunkIDs), string(f)
	}
	b.Queue(`
		INSERT INTO conversation_sources (conversation_id, doc_id, marker, carry_score, pinned, carried,
		       inactive_turns, first_turn, last_turn, last_used_at, cited_chunk_ids, facts, reason)
		SELECT $1, s.doc_id, s.marker, s.carry_score, s.pinned, s.carried, s.inactive_turns, s.first_turn,
		       s.last_turn, s.last_used_at, s.cited::bigint[], s.facts::jsonb, s.reason
		FROM unnest($2::uuid[], $3::text[], $4::float4[], $5::bool[], $6::bool[], $7::int[], $8::int[], $9::int[],
		            $10::timestamptz[], $11::text[], $12::text[], $13::text[]) WITH ORDINALITY
		     AS s (doc_id, marker, carry_score, pinned, carried, inactive_turns, first_turn, last_turn,
		           last_used_at, cited, facts, reason, n)
		ORDER BY s.n
		ON CONFLICT (conversation_id, doc_id) DO UPDATE SET
		       carry_score = excluded.carry_score, pinned = excluded.pinned, carried = excluded.carried,
		       inactive_turns = excluded.inactive_turns, last_turn = excluded.last_turn,
		       last_used_at = excluded.last_used_at, cited_chunk_ids = excluded.cited_chunk_ids,
		       facts = excluded.facts, reason = excluded.reason`,
		conv, docs, markers, scores, pinned, carried, inactive, first, last, used, cited, facts, reasons)
	return nil
}

// int64Array is ids as a PostgreSQL array literal ("{}" for none).
func int64Array(ids []int64) string {
	b := []byte{'{'}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}

// queueMarkers writes the turn's sentence markers in one statement (a turn has a few dozen; a
// statement each cost most of the turn's time in PostgreSQL), in their order: one the
// conversation already has, or an earlier one of the same turn, keeps its place.
func queueMarkers(b *pgx.Batch, conv uuid.UUID, turn int, ms []ragd.SentenceMarker) {
	if len(ms) == 0 {
		return
	}
	markers, docs, sentences := make([]string, len(ms)), make([]uuid.UUID, len(ms)), make([]string, len(ms))
	for i, m := range ms {
		markers[i], docs[i], sentences[i] = m.Marker, m.DocID, m.Sentence
	}
	b.Queue(`INSERT INTO conversation_markers (conversation_id, marker, doc_id, sentence, first_turn)
		SELECT $1, m.marker, m.doc_id, m.sentence, $5
		FROM unnest($2::text[], $3::uuid[], $4::text[]) WITH ORDINALITY AS m (marker, doc_id, sentence, n)
		ORDER BY m.n
		ON CONFLICT DO NOTHING`, conv, markers, docs, sentences, turn)
}

// queueCitations writes the answer's citations in one statement, in their order (ids ascend
// with it). Pages are NULL for a citation without them.
func queueCitations(b *pgx.Batch, msg, conv uuid.UUID, cs []ragd.CitationWrite, ts time.Time) {
	if len(cs) == 0 {
		return
	}
	n := len(cs)
	docs, versions, chunks := make([]uuid.UUID, n), make([]int32, n), make([]int64, n)
	markers, facts, origins := make([]string, n), make([]string, n), make([]string, n)
	scores, ranks := make([]float64, n), make([]int32, n)
	starts, ends := make([]*int32, n), make([]*int32, n)
	for i, c := range cs {
		docs[i], versions[i], chunks[i] = c.DocID, int32(c.DocVersion), c.ChunkID
		markers[i], facts[i], origins[i] = c.Marker, c.Fact, c.Origin
		scores[i], ranks[i] = c.Score, int32(c.Rank)
		if c.PageStart > 0 {
			ps, pe := int32(c.PageStart), int32(c.PageEnd)
			starts[i], ends[i] = &ps, &pe
		}
	}
	b.Queue(`
		INSERT INTO message_citations (message_id, conversation_id, doc_id, doc_version, chunk_id, marker,
		       fact_summary, score, origin, rank, page_start, page_end, created_at)
		SELECT $1, $2, c.doc_id, c.doc_version, c.chunk_id, c.marker, c.fact, c.score, c.origin, c.rank,
		       c.page_start, c.page_end, $13
		FROM unnest($3::uuid[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::float8[], $9::text[],
		            $10::int[], $11::int[], $12::int[]) WITH ORDINALITY
		     AS c (doc_id, doc_version, chunk_id, marker, fact, score, origin, rank, page_start, page_end, n)
		ORDER BY c.n`,
		msg, conv, docs, versions, chunks, markers, facts, scores, origins, ranks, starts, ends, ts)
}

func nonNilMeta(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilFacts(f []ragd.Fact) []ragd.Fact {
	if f == nil {
		return []ragd.Fact{}
	}
	return f
}

func (s *Store) createConversation(ctx context.Context, id uuid.UUID, ab string) (ragd.Conversation, error) {
	if id == uuid.Nil {
		return ragd.Conversation{}, ragd.Invalidf("conversation_id", "a new conversation needs an id")
	}
	c, err := scanConversation(s.db.QueryRow(ctx, `
		INSERT INTO conversations (id, ab_arm, created_at, updated_at) VALUES ($1, nullif($2, ''), $3, $3)
		RETURNING `+conversationColumns, id, ab, now()))
	if err != nil {
		return ragd.Conversation{}, fmt.Errorf("store: creating conversation: %w", err)
	}
	return c, nil
}

const messageColumns = `id, conversation_id, turn, role, content, answer, reply_recorded_at, meta, created_at, stopped_at, key_id`

func scanMessage(row pgx.CollectableRow) (ragd.Message, error) {
	var m ragd.Message
	var meta []byte
	err := row.Scan(&m.ID, &m.ConversationID, &m.Turn, &m.Role, &m.Content, &m.Answer, &m.ReplyRecordedAt, &meta, &m.CreatedAt, &m.StoppedAt, &m.KeyID)
	if err == nil {
		err = json.Unmarshal(meta, &m.Meta)
	}
	return m, err
}

// Messages returns a conversation's messages in turn order, the user's before the assistant's.
func (s *Store) Messages(ctx context.Context, conv uuid.UUID) ([]ragd.Message, error) {
	return s.messages(ctx, conv, "SELECT "+messageColumns+` FROM messages WHERE conversation_id = $1 AND tenant_id = $2
		ORDER BY turn, role DESC`, conv, tenantOf(ctx))
}

// RecentMessages returns a conversation's last messages, at most last (last < 1: all of them),
// with the user message of turn goalTurn when it is older: the rows the (conversation_id, turn,
// role) index gives from the end, so the cost does not grow with the conversation.
func (s *Store) RecentMessages(ctx context.Context, conv uuid.UUID, last, goalTurn int) ([]ragd.Message, error) {
	if last < 1 {
		return s.Messages(ctx, conv)
	}
	return s.messages(ctx, conv, `
		SELECT `+messageColumns+` FROM (
			(SELECT `+messageColumns+` FROM messages WHERE conversation_id = $1 AND tenant_id = $4
			 ORDER BY turn DESC, role LIMIT $2)
			UNION
			SELECT `+messageColumns+` FROM messages WHERE conversation_id = $1 AND tenant_id = $4 AND turn = $3 AND role = 'user'
		) m ORDER BY turn, role DESC`, conv, last, goalTurn, tenantOf(ctx))
}

// messages runs a query of a conversation's messages (conv is for the error) and scans them.
func (s *Store) messages(ctx context.Context, conv uuid.UUID, sql string, args ...any) ([]ragd.Message, error) {
	rows, err := s.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading messages of %s: %w", conv, err)
	}
	ms, err := pgx.CollectRows(rows, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("store: reading messages of %s: %w", conv, err)
	}
	return ms, nil
}

// SetAnswer stores the answer an LLM gave over a turn's fact sheet on its assistant message.
func (s *Store) SetAnswer(ctx context.Context, msg uuid.UUID, answer string) error {
	tag, err := s.db.Exec(ctx, `UPDATE messages SET answer = $2 WHERE id = $1 AND role = 'assistant'`, msg, answer)
	if err != nil {
		return fmt.Errorf("store: saving answer of %s: %w", msg, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("assistant message %s: %w", msg, ragd.ErrNotFound)
	}
	return nil
}

// RecordReply records the reply the chat UI showed for a turn, on the assistant message msg, or
// on the conversation's latest assistant message when msg is zero. A reply is recorded once:
// recording it again is a conflict, because citations were audited against the first.
func (s *Store) RecordReply(ctx context.Context, conv, msg uuid.UUID, content string) (*ragd.Message, error) {
	var m ragd.Message
	err := s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.Conversation(ctx, conv); err != nil {
			return err
		}
		q := "SELECT " + messageColumns + ` FROM messages WHERE conversation_id = $1 AND role = 'assistant'`
		args := []any{conv}
		if msg != uuid.Nil {
			q += " AND id = $2"
			args = append(args, msg)
		}
		rows, err := tx.db.Query(ctx, q+" ORDER BY turn DESC LIMIT 1 FOR UPDATE", args...)
		if err != nil {
			return fmt.Errorf("store: recording reply: %w", err)
		}
		m, err = pgx.CollectExactlyOneRow(rows, scanMessage)
		if errors.Is(err, pgx.ErrNoRows) {
			if msg != uuid.Nil {
				return fmt.Errorf("assistant message %s in conversation %s: %w", msg, conv, ragd.ErrNotFound)
			}
			return fmt.Errorf("conversation %s has no turn to reply to: %w", conv, ragd.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: recording reply: %w", err)
		}
		// Only the key that asked the turn records its reply (or an admin): another key of the
		// tenant cannot put words in the answer first.
		if p := ragd.PrincipalOf(ctx); p.Role != ragd.RoleAdmin && !p.All {
			var asker *uuid.UUID
			if err := tx.db.QueryRow(ctx, "SELECT key_id FROM messages WHERE id = $1", m.ID).Scan(&asker); err != nil {
				return fmt.Errorf("store: recording reply: %w", err)
			}
			if asker != nil && *asker != p.KeyID {
				return fmt.Errorf("the reply to turn %d can be recorded only by the key that asked it: %w", m.Turn, ragd.ErrForbidden)
			}
		}
		if m.ReplyRecordedAt != nil {
			return fmt.Errorf("the reply to turn %d was already recorded at %s: %w", m.Turn, m.ReplyRecordedAt.Format("2006-01-02T15:04:05Z07:00"), ragd.ErrConflict)
		}
		ts := now()
		if _, err := tx.db.Exec(ctx, `UPDATE messages SET content = $2, reply_recorded_at = $3 WHERE id = $1`, m.ID, content, ts); err != nil {
			return fmt.Errorf("store: recording reply: %w", err)
		}
		m.Content, m.ReplyRecordedAt = content, &ts
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// SetPin pins a document in a conversation, or unpins it. Pinning a document the conversation
// has not cited yet makes it a source with the next free letter. Unpinning a document that is not
// a source of the conversation is not found; the row of an unpinned source stays, and it decays
// from then on like any other. created says the call made a pin that was not there.
func (s *Store) SetPin(ctx context.Context, conv, doc uuid.UUID, pinned bool, letter func(next int) string) (*ragd.ConversationSource, bool, error) {
	var out *ragd.ConversationSource
	var created bool
	err := s.InTx(ctx, func(tx *Store) error {
		st, err := tx.conversationState(ctx, conv, true)
		if err != nil {
			return err
		}
		if pinned {
			// A deleted document is out of search: a pin of it, even of a source the
			// conversation showed, would never be served.
			d, err := tx.Document(ctx, doc)
			if err != nil {
				return err
			}
			if d.DeletedAt != nil {
				return fmt.Errorf("document %s was deleted: %w", doc, ragd.ErrNotFound)
			}
		}
		for _, cs := range st.Sources {
			if cs.DocID != doc {
				continue
			}
			created = pinned && !cs.Pinned
			cs.Pinned = pinned
			cs.Carried = cs.Carried || pinned
			cs.Reason = map[bool]string{true: "pinned", false: "unpinned"}[pinned]
			if _, err := tx.db.Exec(ctx, `UPDATE conversation_sources SET pinned = $3, carried = $4, reason = $5
				WHERE conversation_id = $1 AND doc_id = $2`, conv, doc, cs.Pinned, cs.Carried, cs.Reason); err != nil {
				return fmt.Errorf("store: pinning: %w", err)
			}
			out = &cs
			return nil
		}
		if !pinned {
			return fmt.Errorf("document %s is not a source of conversation %s: %w", doc, conv, ragd.ErrNotFound)
		}
		taken := map[string]bool{}
		for _, cs := range st.Sources {
			taken[cs.Marker] = true
		}
		next := st.Conversation.NextLetter
		for taken[letter(next)] {
			next++
		}
		cs := ragd.ConversationSource{DocID: doc, Marker: letter(next), CarryScore: 1, Pinned: true, Carried: true,
			FirstTurn: st.Conversation.Turn, LastTurn: st.Conversation.Turn, LastUsedAt: now(), Reason: "pinned"}
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO conversation_sources (conversation_id, doc_id, marker, carry_score, pinned, carried,
			       first_turn, last_turn, last_used_at, reason)
			VALUES ($1, $2, $3, 1, true, true, $4, $4, $5, $6)`, conv, doc, cs.Marker, cs.FirstTurn, cs.LastUsedAt, cs.Reason); err != nil {
			return fmt.Errorf("store: pinning: %w", err)
		}
		if _, err := tx.db.Exec(ctx, `UPDATE conversations SET next_letter = $2, updated_at = $3 WHERE id = $1`, conv, next+1, now()); err != nil {
			return fmt.Errorf("store: pinning: %w", err)
		}
		out, created = &cs, true
		return nil
	})
	return out, created, err
}

// Message returns a message of a conversation that is not deleted.
func (s *Store) Message(ctx context.Context, id uuid.UUID) (*ragd.Message, error) {
	rows, err := s.db.Query(ctx, "SELECT "+messageColumns+` FROM messages m WHERE id = $1
		AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = m.conversation_id AND c.deleted_at IS NULL)`, id)
	if err != nil {
		return nil, fmt.Errorf("store: reading message %s: %w", id, err)
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanMessage)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("message %s: %w", id, ragd.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading message %s: %w", id, err)
	}
	return &m, nil
}

// StopAnswer records that an assistant message's answer stream was stopped, with the answer as
// far as it was sent (sent nil keeps the recorded answer: the fact sheet, when no LLM streams).
// A message is stopped once; stopping it again returns it unchanged.
func (s *Store) StopAnswer(ctx context.Context, msg uuid.UUID, sent *string) (*ragd.Message, error) {
	rows, err := s.db.Query(ctx, `UPDATE messages SET answer = coalesce($2, answer), stopped_at = $3
		WHERE id = $1 AND role = 'assistant' AND stopped_at IS NULL RETURNING `+messageColumns, msg, sent, now())
	if err != nil {
		return nil, fmt.Errorf("store: stopping %s: %w", msg, err)
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanMessage)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.Message(ctx, msg)
	}
	if err != nil {
		return nil, fmt.Errorf("store: stopping %s: %w", msg, err)
	}
	// Tell a replica waiting in RequestStop that the stop is recorded.
	if _, err := s.db.Exec(ctx, "SELECT pg_notify($1, $2)", stoppedChannel, msg.String()); err != nil {
		return nil, fmt.Errorf("store: stopping %s: %w", msg, err)
	}
	return &m, nil
}

func (s *Store) sentenceMarkers(ctx context.Context, id uuid.UUID) ([]ragd.SentenceMarker, error) {
	rows, err := s.db.Query(ctx, `SELECT marker, doc_id, sentence, first_turn FROM conversation_markers
		WHERE conversation_id = $1 ORDER BY first_turn, marker`, id)
	if err != nil {
		return nil, fmt.Errorf("store: reading markers of %s: %w", id, err)
	}
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ragd.SentenceMarker])
	if err != nil {
		return nil, fmt.Errorf("store: reading markers of %s: %w", id, err)
	}
	return ms, nil
}
