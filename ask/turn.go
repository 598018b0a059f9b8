package ask

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/citations"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/fuse"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/kg"
	"github.com/ragd/ragd/refer"
)

// Turn intents: how a turn relates to the conversation so far.
const (
	NewTopic    = "new-topic"    // a different subject: carried sources are dropped, pins stay
	DrillDown   = "drill-down"   // deeper on the same subject: carried sources and fresh retrieval
	Compare     = "compare"      // contrasts entities: each is retrieved for, and the lists merged
	SameSources = "same-sources" // about what was already found: the carried sources are favoured
)

// Intent is a turn's intent as classified.
type Intent struct {
	Label      string
	Confidence float64
	// NewTopic is the classifier's probability of new-topic when new-topic was its answer
	// before the new-topic guard, else 0: goal boundaries read it, since a turn that moves to
	// a new goal may still need the carried sources ("a taxi from the hotel to the restaurant").
	NewTopic float64
	// Entities are the compared entities of a compare turn.
	Entities []string
}

// IntentClassifier classifies a turn from its text, the conversation's previous user turns
// (oldest first), short descriptions of the sources it carries and the terms of the
// conversation's focus (what it is about), heaviest first.
type IntentClassifier interface {
	Classify(text string, history, sources, focus []string) Intent
}

// Request is one user turn.
type Request struct {
	// ConversationID continues a conversation; zero starts a new one.
	ConversationID uuid.UUID
	Message        string
	// Pins are documents the user pins with this turn: carried into it and every later one.
	Pins []uuid.UUID
	// ModeHint is the chat UI's word for the interaction (task, debug, explore, learn,
	// general...); unknown or empty leaves the mode to the classifier.
	ModeHint string
	// Idempotency, when set, is recorded with the turn, in its transaction.
	Idempotency *ragd.Idempotency
}

// Source is one passage a turn returns, with its facts and where it came from.
type Source struct {
	Rank    int
	Letter  string
	DocID   uuid.UUID
	Version int
	ChunkID int64
	// Members are the chunks dedupe joined into this passage, ChunkID's first.
	Members   []int64
	Title     string
	Heading   string
	URL       string
	Path      string
	Date      time.Time
	DateKind  string // "published" when the document says so, else "ingested"
	PageStart int
	PageEnd   int
	Text      string
	Score     float64
	Fused     float64
	Rerank    *float64
	Origins   []string // the lists that found it: bm25, vector, carry, kg
	Facts     []ragd.Fact
	// Referred is the words by which the turn referred to the source ("the second one").
	Referred string
}

// CarryReport says how the conversation's sources were carried into a turn.
type CarryReport struct {
	// Method is how carried sources were re-scored: cross-encoder, embedding or lexical.
	Method     string
	Candidates int // carried and pinned sources considered
	Entered    int // those that entered fusion (re-score >= tau, or pinned)
}

// Turn is what one /v1/ask call produced and recorded.
type Turn struct {
	ConversationID     uuid.UUID
	Turn               int
	UserMessageID      uuid.UUID
	AssistantMessageID uuid.UUID
	Intent             Intent
	// References are the shown sources the turn referred to or set aside (package refer).
	References refer.Resolution
	Carry      CarryReport
	Mode       Mode
	// Goal says whether the turn started a new goal (which finished the one before).
	Goal    compact.Boundary
	Context Context
	Sources []Source
	// Ranked is every candidate of the turn in final order, before the cut to Sources; for
	// evaluation, which scores rankings deeper than the sources a turn returns.
	Ranked []Candidate
	// Answer is the extractive answer: the fact sheet as text.
	Answer string
	// Lists are the retrieval lists that were fused; Reranked whether the cross-encoder ordered
	// the sources, and Skipped why a stage did not run.
	Lists    []string
	Reranked bool
	Skipped  map[string]string
	// Queries holds the text each search ran with, by list name: the question itself, and what
	// the conversation added (context, compared entities).
	Queries map[string]string
	Timings Timings

	question string        // the message, for the answer step
	latency  time.Duration // from the request to the context bundle, recorded with the turn
}

// validate checks the user's message before any work is done for it.
func (p *Pipeline) validate(req *Request) error {
	req.Message = strings.TrimSpace(req.Message)
	switch {
	case req.Message == "":
		return ragd.Invalidf("message", "is empty")
	case len(req.Message) > p.cfg.MaxMessageBytes:
		return ragd.Invalidf("message", "is %d bytes, over the %d-byte limit", len(req.Message), p.cfg.MaxMessageBytes)
	case !utf8.ValidString(req.Message):
		return ragd.Invalidf("message", "is not valid UTF-8")
	case len(req.Pins) > p.cfg.MaxPins:
		return ragd.Invalidf("pins", "%d pins, over the limit of %d per conversation", len(req.Pins), p.cfg.MaxPins)
	}
	return nil
}

// PinLimit checks that a conversation with sources would have at most max pins after pinning
// add: an error naming the pins when not.
func PinLimit(sources []ragd.ConversationSource, add []uuid.UUID, max int) error {
	pinned := map[uuid.UUID]bool{}
	for _, s := range sources {
		if s.Pinned {
			pinned[s.DocID] = true
		}
	}
	for _, id := range add {
		pinned[id] = true
	}
	if len(pinned) > max {
		return ragd.Invalidf("pins", "the conversation would have %d pinned documents, over the limit of %d: unpin some first", len(pinned), max)
	}
	return nil
}

// Ask runs one turn: the conversation's state, the turn's intent, the carried sources re-scored,
// fresh retrieval, dedupe, fusion, rerank, the fact sheet, and the record of it all in one
// transaction. A failure anywhere leaves the conversation as it was.
func (p *Pipeline) Ask(ctx context.Context, req Request) (*Turn, error) {
	start := time.Now()
	if err := p.validate(&req); err != nil {
		return nil, err
	}
	turn := &Turn{Skipped: map[string]string{}, question: req.Message}
	t := time.Now()
	st, cv, err := p.load(ctx, req)
	if err != nil {
		return nil, err
	}
	history := cv.history
	turn.Timings.add("load_conversation", time.Since(t))

	var tfocus *turnFocus // nil: the focus is off (FocusWeight 0), neither tracked nor searched with
	if p.cfg.FocusWeight > 0 {
		t = time.Now()
		tf := p.focusFor(ctx, req.Message, st, cv)
		turn.Timings.add("focus", time.Since(t))
		tfocus = &tf
	}

	t = time.Now()
	// References to what the conversation showed are resolved before any classifier.
	if turn.References = references(req.Message, cv, st); len(turn.References.Refers) > 0 {
		turn.Intent = Intent{Label: SameSources, Confidence: 1}
	} else {
		turn.Intent = p.classify(req.Message, history, st.Sources, st.Focus)
		if turn.Intent.Label == SameSources && tfocus != nil && tfocus.namesTitle() {
			// A turn that names a title asks about it, not only about the sources already
			// found: it is not restricted to them.
			turn.Intent = Intent{Label: DrillDown, Confidence: turn.Intent.Confidence}
		}
	}
	turn.Mode = p.detectMode(ctx, req.ModeHint, req.Message, history, cv.modes)
	spans := invariant.Detect(req.Message)
	turn.Goal = GoalBoundary(p.Boundaries, cv.messages, req.Message, turn.Intent, p.Intent != nil)
	turn.Timings.add("classify", time.Since(t))
	var summaries map[int]string
	t = time.Now()
	if made := p.summarize(ctx, st.Capsules, cv, req.Message, turn.Goal); made != nil {
		turn.Timings.add("summarize", time.Since(t))
		summaries = made
	}

	o := rankOptions{rerank: p.Reranker != nil, known: map[int64]float64{}, vectors: map[string][]float32{},
		chunks: newChunkCache(p.Store)}
	if p.Embedder == nil {
		turn.Skipped["vector"] = "no embedding model configured"
	}
	if p.Reranker == nil {
		turn.Skipped["rerank"] = "no cross-encoder configured: sources are in fused order"
	}
	t = time.Now()
	picks, belowTau, err := p.carried(ctx, req, st, turn, &o)
	if err != nil {
		return nil, err
	}
	turn.Timings.add("carry", time.Since(t))
	if err := p.plan(ctx, req.Message, history, turn.Intent, picks, focusOf(st.Sources, turn.Intent), &o); err != nil {
		return nil, err
	}
	if tfocus != nil && turn.Intent.Label != NewTopic { // a new topic leans on nothing, as for the context search
		o.searches = append(o.searches, p.focusSearches(req.Message, *tfocus)...)
	}

	ranking, err := p.rank(ctx, req.Message, o)
	if err != nil {
		return nil, err
	}
	turn.Lists, turn.Reranked, turn.Ranked, turn.Queries = ranking.Lists, ranking.Reranked, ranking.Candidates, ranking.Queries
	turn.Timings = append(turn.Timings, ranking.Timings...)
	ranked := firstPerDocument(ranking.Candidates)
	kept := referredFirst(ranked, keep(ranked, p.cfg), turn.References)

	t = time.Now()
	sources, err := p.describe(ctx, kept)
	if err != nil {
		return nil, err
	}
	referredBy(sources, turn.References)
	turn.Timings.add("describe", time.Since(t))

	ref := ragd.ConversationRef{ID: req.ConversationID}
	if ref.ID == uuid.Nil {
		if ref.ID, err = uuid.NewV7(); err != nil {
			return nil, fmt.Errorf("ask: new conversation id: %w", err)
		}
		ref.New = true
		if ref.Arm, err = p.arm(ctx); err != nil {
			return nil, err
		}
	}
	// What the context bundle takes from the conversation (invariants, decisions, goal, recent
	// messages, capsules) is gathered before the turn's transaction, from the conversation as read
	// above, so a long conversation does not hold its lock while it is read through. Under the
	// lock it is gathered again only when the conversation moved in between (another turn, or
	// capsules written), so the telemetry recorded with the turn describes the bundle returned,
	// built from the conversation as locked; the evidence, whose markers the fact sheet assigns
	// under the lock, and the bundle's cut to its budgets, are done there.
	arm := st.Conversation.ABArm
	if ref.New {
		arm = ref.Arm
	}
	tc := time.Now()
	hist := p.history(st, cv, req.Message, spans, turn.Goal, summaries)
	outside := time.Since(tc)
	t = time.Now()
	var factsTime, lockedContext time.Duration
	var answer string
	began := start
	read := st
	res, err := p.Store.Turn(ctx, ref, func(st *ragd.ConversationState) (*ragd.TurnWrite, error) {
		if err := PinLimit(st.Sources, req.Pins, p.cfg.MaxPins); err != nil {
			return nil, err // checked under the conversation's lock: concurrent pins cannot pass it together
		}
		tf := time.Now()
		w := record(turnRecord{message: req.Message, sources: sources, intent: turn.Intent, belowTau: belowTau,
			pins: req.Pins, perSource: p.cfg.FactsPerSource, carry: p.cfg.Carry, now: time.Now().UTC()}, st)
		factsTime, answer = time.Since(tf), w.Answer
		tc := time.Now()
		h := hist
		if moved(read, st) {
			h = p.history(st, cv, req.Message, spans, turn.Goal, summaries)
		}
		in := h.input
		in.Evidence = evidence(sources)
		turn.Context = p.buildContext(in, turn.Mode.Mode, arm)
		if h.start {
			w.GoalTurn = h.number
		}
		w.Capsules = h.capsules
		turn.latency = time.Since(began)
		telemetry(w, turn)
		w.Meta[shownKey] = shownMeta(sources)
		if !turn.References.Empty() {
			w.Meta["references"] = turn.References
		}
		w.Idempotency = req.Idempotency
		if tfocus != nil {
			f := nextFocus(st.Focus, *tfocus, h.number, sources, p.cfg.Focus)
			w.Focus = &f
		}
		w.UserMeta = map[string]any{"invariants": spans, "goal_start": h.start,
			"goal": map[string]any{"new": turn.Goal.New, "confidence": turn.Goal.Confidence, "reason": turn.Goal.Reason}}
		lockedContext = time.Since(tc)
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	if len(turn.Context.Breach) > 0 {
		p.Logger.ErrorContext(ctx, "context bundle lost sticky invariants: rebuilt with GENERAL budgets",
			slog.String("conversation", res.Conversation.ID.String()), slog.Int("turn", res.Conversation.Turn),
			slog.String("mode", string(turn.Mode.Mode)), slog.String("missing", invariantTexts(turn.Context.Breach)))
	}
	turn.Timings.add("facts", factsTime)
	// context: the conversation read through, outside the lock; bundle: the bundle cut to its
	// budgets with the turn's evidence, under it.
	turn.Timings.add("context", outside)
	turn.Timings.add("bundle", lockedContext)
	turn.Timings.add("persist", time.Since(t)-factsTime-lockedContext)
	turn.ConversationID = res.Conversation.ID
	turn.Turn = res.Conversation.Turn
	turn.UserMessageID = res.UserMessageID
	turn.AssistantMessageID = res.AssistantMessageID
	turn.Sources = sources
	turn.Answer = answer
	turn.Timings.add("total", time.Since(start))
	if p.Monitors.Experiment != nil {
		p.Monitors.Experiment.Turn(turn.Context.Arm, time.Since(start))
	}
	return turn, nil
}

// load reads the conversation the turn continues (an empty state for a new one) and its
// messages, and checks that pinned documents exist.
func (p *Pipeline) load(ctx context.Context, req Request) (*ragd.ConversationState, conversation, error) {
	for _, id := range req.Pins {
		d, err := p.Store.Document(ctx, id)
		if err != nil {
			return nil, conversation{}, fmt.Errorf("pin: %w", err)
		}
		if d.DeletedAt != nil {
			return nil, conversation{}, fmt.Errorf("pin: document %s was deleted: %w", id, ragd.ErrNotFound)
		}
	}
	if req.ConversationID == uuid.Nil {
		return &ragd.ConversationState{}, conversation{}, nil
	}
	st, err := p.Store.ConversationState(ctx, req.ConversationID)
	if err != nil {
		return nil, conversation{}, err
	}
	msgs, err := p.Store.Messages(ctx, req.ConversationID)
	if err != nil {
		return nil, conversation{}, err
	}
	return st, readConversation(msgs), nil
}

// classify returns the turn's intent. A first turn has no topic to keep: it is a new topic.
// Without a classifier every later turn is a drill-down, the intent that keeps both carried
// sources and fresh retrieval.
func (p *Pipeline) classify(text string, history []string, sources []ragd.ConversationSource, f focus.Focus) Intent {
	if len(history) == 0 {
		return Intent{Label: NewTopic, Confidence: 1}
	}
	if p.Intent == nil {
		return Intent{Label: DrillDown, Confidence: 0}
	}
	var descs []string
	for _, s := range sources {
		if !s.Carried && !s.Pinned {
			continue
		}
		for _, f := range s.Facts {
			descs = append(descs, f.Text)
		}
	}
	// The focus is evidence against a new topic: a turn that names what the conversation is
	// about continues it.
	terms := make([]string, 0, len(f.Terms))
	for _, t := range f.Terms {
		terms = append(terms, t.Text)
	}
	in := p.Intent.Classify(text, history, descs, terms)
	if in.Confidence < p.cfg.IntentThreshold {
		// An unsure classifier should not drop sources or restrict retrieval. A sure new-topic
		// that the guard turned into an unsure label still tells goal boundaries the user moved.
		out := Intent{Label: DrillDown, Confidence: in.Confidence}
		if in.NewTopic >= p.cfg.IntentThreshold {
			out.NewTopic = in.NewTopic
		}
		return out
	}
	return in
}

// carried re-scores the sources the conversation may carry into this turn and returns those
// that enter, and those that did not make tau. The re-score is the cross-encoder's when one is
// configured (the most accurate judge, and its scores are reused by the rerank stage), else the
// cosine similarity of the chunk's embedding to the question's (already computed for vector
// search), else the share of the question's IDF mass the chunk contains (lexical, no model).
func (p *Pipeline) carried(ctx context.Context, req Request, st *ragd.ConversationState, turn *Turn, o *rankOptions) ([]carry.Pick, map[uuid.UUID]bool, error) {
	cands := withReferences(carry.Candidates(st.Sources, turn.Intent.Label == NewTopic), st.Sources, turn.References)
	known := map[uuid.UUID]bool{}
	for _, c := range cands {
		known[c.DocID] = true
	}
	for _, id := range req.Pins {
		if !known[id] {
			cands = append(cands, ragd.ConversationSource{DocID: id, Pinned: true, Carried: true, CarryScore: 1})
		}
	}
	turn.Carry.Candidates = len(cands)
	if len(cands) == 0 {
		return nil, nil, nil
	}
	// A source is judged by the chunks it was cited for; a newly pinned document, never cited,
	// by its first chunks.
	var fresh []uuid.UUID
	for _, c := range cands {
		if len(c.CitedChunkIDs) == 0 {
			fresh = append(fresh, c.DocID)
		}
	}
	firsts, err := p.Store.ActiveChunkIDs(ctx, fresh, p.cfg.PinChunks)
	if err != nil {
		return nil, nil, fmt.Errorf("ask: carried sources: %w", err)
	}
	owner := map[int64]uuid.UUID{}
	var ids []int64
	for _, c := range cands {
		chunks := c.CitedChunkIDs
		if len(chunks) == 0 {
			chunks = firsts[c.DocID]
		}
		for _, id := range chunks {
			owner[id] = c.DocID
			ids = append(ids, id)
		}
	}
	scores, method, err := p.rescore(ctx, req.Message, ids, o)
	if err != nil {
		return nil, nil, err
	}
	turn.Carry.Method = method
	best := map[uuid.UUID]carry.ReScore{}
	for id, score := range scores {
		doc := owner[id]
		if b, ok := best[doc]; !ok || score > b.Score || (score == b.Score && id < b.ChunkID) {
			best[doc] = carry.ReScore{ChunkID: id, Score: score}
		}
	}
	cfg := p.cfg.Carry
	if turn.Intent.Label == Compare || turn.Intent.Label == SameSources {
		// These turns refer to what was found ("is it the same for ...", "in that document"):
		// the carried sources are the referent, whatever the question's words score against them.
		cfg.Tau = 0
	}
	capped := cfg.Cap
	cfg.Cap = len(cands) // the sources the turn refers to pass the cap
	picks := referredPicks(carry.Select(cands, best, cfg), turn.References, capped)
	turn.Carry.Entered = len(picks)
	entered := map[uuid.UUID]bool{}
	for _, pk := range picks {
		entered[pk.DocID] = true
	}
	below := map[uuid.UUID]bool{}
	for _, c := range cands {
		if !entered[c.DocID] {
			below[c.DocID] = true
		}
	}
	return picks, below, nil
}

// rescore scores chunks against the question with the best judge available (see carried).
// Inactive chunks get no score.
func (p *Pipeline) rescore(ctx context.Context, query string, ids []int64, o *rankOptions) (map[int64]float64, string, error) {
	out := map[int64]float64{}
	if p.Reranker == nil && p.Embedder != nil {
		vecs, err := p.Embedder.Embed(ctx, []string{query})
		if err != nil {
			return nil, "", fmt.Errorf("ask: embedding the question: %w", err)
		}
		o.vectors[query] = vecs[0]
		sims, err := p.Store.Similarity(ctx, vecs[0], ids)
		if err != nil {
			return nil, "", fmt.Errorf("ask: re-scoring carried sources: %w", err)
		}
		for id, s := range sims {
			out[id] = max(s, 0)
		}
		return out, "embedding", nil
	}
	chunks, err := o.chunks.get(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	var passages []string
	var active []int64
	for _, c := range chunks {
		if c.Active {
			passages = append(passages, passage(c))
			active = append(active, c.ID)
		}
	}
	method := "lexical"
	var scores []float64
	if p.Reranker != nil {
		method = "cross-encoder"
		ce, err := p.Reranker.Score(ctx, query, passages)
		if err != nil {
			return nil, "", fmt.Errorf("ask: re-scoring carried sources: %w", err)
		}
		for i, id := range active {
			o.known[id] = float64(ce[i])
			scores = append(scores, float64(ce[i]))
		}
	} else if scores, err = p.Index.Coverage(query, passages); err != nil {
		return nil, "", fmt.Errorf("ask: re-scoring carried sources: %w", err)
	}
	for i, id := range active {
		out[id] = scores[i]
	}
	return out, method, nil
}

// plan sets the turn's searches and extra lists by intent: every turn searches the question
// itself; a compare turn also searches each compared entity; a same-sources turn searches within
// the carried sources at full weight and everywhere else at a reduced one; carried sources enter
// as their own list.
func (p *Pipeline) plan(ctx context.Context, query string, history []string, in Intent, picks []carry.Pick, focusChunks []int64, o *rankOptions) error {
	vector := p.Embedder != nil
	freshWeight := 1.0
	if in.Label == SameSources && len(picks) > 0 {
		freshWeight = p.cfg.SameSourcesFreshWeight
		docs := make([]uuid.UUID, len(picks))
		for i, pk := range picks {
			docs[i] = pk.DocID
		}
		chunks, err := p.Store.ActiveChunkIDs(ctx, docs, p.cfg.SourceChunks)
		if err != nil {
			return fmt.Errorf("ask: same-sources: %w", err)
		}
		var ids []int64
		for _, d := range docs {
			ids = append(ids, chunks[d]...)
		}
		o.searches = append(o.searches, search{name: "sources-bm25", weight: p.cfg.BM25Weight, text: query, chunks: ids})
		if vector {
			o.searches = append(o.searches, search{name: "sources-vector", weight: p.cfg.VectorWeight, text: query, vector: true, docs: docs})
		}
	}
	o.searches = append(o.searches, p.freshSearches(query, vector, freshWeight)...)
	if in.Label == Compare {
		for i, e := range in.Entities {
			name := fmt.Sprintf("compare%d", i+1)
			o.searches = append(o.searches, search{name: name + "-bm25", weight: p.cfg.CompareWeight, text: e})
			if vector {
				o.searches = append(o.searches, search{name: name + "-vector", weight: p.cfg.CompareWeight, text: e, vector: true})
			}
		}
	}
	if len(picks) > 0 {
		w := p.cfg.CarryWeight
		if in.Label == Compare || in.Label == SameSources {
			w = p.cfg.ReferWeight
		}
		l := fuse.List{Name: "carry", Weight: w}
		for _, pk := range picks {
			l.IDs = append(l.IDs, pk.ChunkID)
		}
		o.extra = append(o.extra, l)
	}
	if p.cfg.Graph && len(history) > 0 && in.Label != NewTopic {
		l, err := p.graphList(ctx, query, history, picks, o)
		if err != nil {
			return err
		}
		if len(l.IDs) > 0 {
			o.extra = append(o.extra, l)
		}
	}
	if p.cfg.ContextWeight > 0 && len(history) > 0 && in.Label != NewTopic {
		text, err := p.contextText(ctx, query, history[len(history)-1], focusChunks, o)
		if err != nil {
			return err
		}
		if text != query {
			w := p.cfg.ContextWeight
			if focus.PointsBack(query) {
				w *= p.cfg.AnaphoraBoost
			}
			o.searches = append(o.searches, search{name: "context-bm25", weight: w, text: text})
		}
	}
	return nil
}

// graphList is the mini knowledge graph's contribution to a turn: when entities of the question
// came up before (in earlier questions or the carried sources' facts), the chunks that mention
// them and their strongest 1-hop neighbours, a small capped list.
func (p *Pipeline) graphList(ctx context.Context, query string, history []string, picks []carry.Pick, o *rankOptions) (fuse.List, error) {
	l := fuse.List{Name: "kg", Weight: p.cfg.KGWeight}
	earlier := make([][]kg.Entity, 0, len(history)+1)
	for _, h := range history {
		earlier = append(earlier, kg.Extract(h, nil))
	}
	if len(picks) > 0 {
		ids := make([]int64, len(picks))
		for i, pk := range picks {
			ids[i] = pk.ChunkID
		}
		chunks, err := o.chunks.get(ctx, ids)
		if err != nil {
			return l, err
		}
		for _, c := range chunks {
			earlier = append(earlier, kg.Extract(c.Title+"\n"+c.Text, nil))
		}
	}
	repeated := kg.Repeated(kg.Extract(query, nil), earlier)
	if len(repeated) == 0 {
		return l, nil
	}
	names := make([]string, len(repeated))
	for i, e := range repeated {
		names[i] = e.Name
	}
	neighbours, err := p.Store.Neighbours(ctx, names, p.cfg.KGNeighbours)
	if err != nil {
		return l, fmt.Errorf("ask: graph: %w", err)
	}
	for _, n := range neighbours {
		names = append(names, n.Name)
	}
	if l.IDs, err = p.Store.EntityChunks(ctx, names, p.cfg.KGChunks); err != nil {
		return l, fmt.Errorf("ask: graph: %w", err)
	}
	return l, nil
}

// focusOf returns the cited chunks of the conversation's focus: its carried sources by carry
// score, strongest first (the sources the last turns leaned on most).
func focusOf(sources []ragd.ConversationSource, in Intent) []int64 {
	cands := carry.Candidates(sources, in.Label == NewTopic)
	slices.SortStableFunc(cands, func(a, b ragd.ConversationSource) int { return cmp.Compare(b.CarryScore, a.CarryScore) })
	var ids []int64
	for _, c := range cands {
		if len(c.CitedChunkIDs) > 0 {
			ids = append(ids, c.CitedChunkIDs[0])
		}
	}
	return ids
}

// contextText is the question followed by the words that say the most (by IDF) of the previous
// turn (the user's question and the recorded reply) and of the titles of the conversation's focus, among those the question lacks: what a
// follow-up leaves implicit ("when do they play?" after a question about the Arizona Cardinals).
// The question's own search runs beside it, so the added words can only add votes.
func (p *Pipeline) contextText(ctx context.Context, query, previous string, ids []int64, o *rankOptions) (string, error) {
	source := previous
	if len(ids) > 0 {
		chunks, err := o.chunks.get(ctx, ids)
		if err != nil {
			return "", err
		}
		var titles []string
		for _, c := range chunks {
			if len(titles) < p.cfg.ContextTitles && c.Title != "" && !slices.Contains(titles, c.Title) {
				titles = append(titles, c.Title)
			}
		}
		source += " " + strings.Join(titles, " ")
	}
	words, err := p.Index.Keywords(source, query, p.cfg.ContextTerms)
	if err != nil {
		return "", fmt.Errorf("ask: context search: %w", err)
	}
	if len(words) == 0 {
		return query, nil
	}
	return query + " " + strings.Join(words, " "), nil
}

// describe turns kept candidates into sources with their documents' details.
func (p *Pipeline) describe(ctx context.Context, kept []Candidate) ([]Source, error) {
	refs := make([]ragd.VersionRef, len(kept))
	for i, c := range kept {
		refs[i] = ragd.VersionRef{DocID: c.Chunk.DocID, Version: c.Chunk.Version}
	}
	info, err := p.Store.VersionInfo(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	sources := make([]Source, len(kept))
	for i, c := range kept {
		vi := info[refs[i]]
		s := Source{Rank: i + 1, DocID: c.Chunk.DocID, Version: c.Chunk.Version, ChunkID: c.Chunk.ID,
			Members: c.Members, Title: vi.Title, Heading: c.Chunk.Heading, URL: vi.URL, Path: vi.Path,
			Date: vi.IngestedAt, DateKind: "ingested", PageStart: c.PageStart, PageEnd: c.PageEnd,
			Text: c.Chunk.Text, Score: c.Score(), Fused: c.Fused, Origins: origins(c.Ranks)}
		if vi.PublishedAt != nil {
			s.Date, s.DateKind = *vi.PublishedAt, "published"
		}
		if c.Reranked {
			r := c.Rerank
			s.Rerank = &r
		}
		sources[i] = s
	}
	return sources, nil
}

// origins names the kinds of lists that found a passage, in a fixed order: fresh BM25 and vector
// (per-entity compare searches count as fresh), carry (the carried list, or searches within the
// carried sources), kg.
func origins(ranks map[string]int) []string {
	has := map[string]bool{}
	for name := range ranks {
		switch {
		case name == "carry" || strings.HasPrefix(name, "sources-") || strings.HasPrefix(name, "context-") || strings.HasPrefix(name, "focus"):
			has["carry"] = true
		case strings.HasSuffix(name, "bm25"):
			has["bm25"] = true
		case strings.HasSuffix(name, "vector"):
			has["vector"] = true
		default:
			has[name] = true
		}
	}
	var out []string
	for _, name := range []string{"bm25", "vector", "carry", "kg"} {
		if has[name] {
			out = append(out, name)
		}
	}
	return out
}

// turnRecord is what record needs to know of a turn.
type turnRecord struct {
	message   string
	sources   []Source
	intent    Intent
	belowTau  map[uuid.UUID]bool
	pins      []uuid.UUID
	perSource int
	carry     carry.Config
	now       time.Time
}

// record builds, from the conversation as locked, what the turn writes: the fact sheet with the
// conversation's letters, one citation per fact, and the new state of the conversation's
// sources. It fills in the sources' letters and facts. It is pure, so it runs on the freshest
// state: two concurrent turns of one conversation apply one after the other.
func record(r turnRecord, st *ragd.ConversationState) *ragd.TurnWrite {
	letters := map[uuid.UUID]string{}
	for _, cs := range st.Sources {
		letters[cs.DocID] = cs.Marker
	}
	in := make([]citations.Source, len(r.sources))
	for i, s := range r.sources {
		in[i] = citations.Source{DocID: s.DocID, ChunkID: s.ChunkID, Title: s.Title, Heading: s.Heading, Text: s.Text, Score: s.Score}
	}
	known := make(map[citations.SentenceKey]string, len(st.Markers))
	for _, m := range st.Markers {
		known[citations.KeyOf(m.DocID, m.Sentence)] = m.Marker
	}
	sheet, assigned, next := citations.Build(r.message, in, letters, st.Conversation.NextLetter, r.perSource, known)
	for id, l := range assigned {
		letters[id] = l
	}
	number := st.Conversation.Turn + 1
	w := &ragd.TurnWrite{UserMessage: r.message,
		Meta: map[string]any{"sources": len(r.sources), "turn_intent": r.intent.Label, "turn_intent_confidence": r.intent.Confidence}}
	used := map[uuid.UUID]carry.Used{}
	for i, e := range sheet {
		s := &r.sources[i]
		s.Letter = e.Letter
		s.Facts = make([]ragd.Fact, len(e.Facts))
		for j, f := range e.Facts {
			s.Facts[j] = ragd.Fact{Marker: f.Marker, Text: f.Text, ChunkID: s.ChunkID, Score: f.Score}
			w.Markers = append(w.Markers, ragd.SentenceMarker{Marker: f.Marker, DocID: s.DocID, Sentence: citations.KeyOf(s.DocID, f.Text).Text})
			w.Citations = append(w.Citations, ragd.CitationWrite{DocID: s.DocID, DocVersion: s.Version,
				ChunkID: s.ChunkID, Marker: f.Marker, Fact: f.Text, Score: s.Score,
				Origin: strings.Join(s.Origins, ","), Rank: s.Rank, PageStart: s.PageStart, PageEnd: s.PageEnd})
		}
		u := used[s.DocID]
		u.Letter = e.Letter
		if top := r.sources[0].Score; top > 0 {
			u.Strength = max(u.Strength, s.Score/top)
		}
		u.Chunks = append(u.Chunks, s.ChunkID)
		u.Facts = append(u.Facts, s.Facts...)
		u.Carried = u.Carried || slices.Contains(s.Origins, "carry")
		used[s.DocID] = u
	}
	// A pinned document the conversation had not seen, and that this turn did not return, still
	// needs a letter: the user will see it among the conversation's sources.
	pins := map[uuid.UUID]string{}
	taken := map[string]bool{}
	for _, l := range letters {
		taken[l] = true
	}
	for _, id := range r.pins {
		l, ok := letters[id]
		for !ok {
			if c := citations.Letter(next); !taken[c] {
				l, ok = c, true
				taken[c] = true
			}
			next++
		}
		pins[id] = l
	}
	w.NextLetter = next
	w.Sources = carry.Update(st.Sources, carry.Turn{Number: number, Now: r.now, NewTopic: r.intent.Label == NewTopic,
		Used: used, BelowTau: r.belowTau, Pin: pins}, r.carry)
	w.Answer = NoSources
	if len(sheet) > 0 {
		w.Answer = citations.Render(sheet, dates(r.sources))
	}
	return w
}

// NoSources is the answer of a turn that found nothing to cite.
const NoSources = "No passage in the indexed documents matches this question."

func dates(sources []Source) map[uuid.UUID]string {
	out := map[uuid.UUID]string{}
	for _, s := range sources {
		out[s.DocID] = s.Date.Format("2006-01-02")
	}
	return out
}

// turnHistory is what a turn's context bundle takes from the conversation, with what it decided:
// the turn's number, whether the turn starts a goal, and the capsules of the goals that start
// finishes.
type turnHistory struct {
	number   int
	start    bool
	capsules []ragd.Capsule
	input    bundle.Input // all but the evidence and the budgets
}

// history gathers the bundle's input from the conversation st (with messages cv) for the turn
// that asks message.
func (p *Pipeline) history(st *ragd.ConversationState, cv conversation, message string, spans []invariant.Span,
	goal compact.Boundary, summaries map[int]string) turnHistory {
	h := turnHistory{number: st.Conversation.Turn + 1}
	h.start = goal.New && h.number > 1
	h.capsules = p.capsules(st.Capsules, cv, h.number, message, h.start, summaries)
	h.input = ContextInput(History{Messages: cv.messages, Capsules: append(slices.Clone(st.Capsules), h.capsules...)},
		TurnContext{Number: h.number, Message: message, Spans: spans, GoalStart: h.start, Rules: p.cfg.Rules, Strategy: p.strategy})
	return h
}

// moved reports whether the conversation changed between read, before the turn's transaction,
// and locked, under its lock, in what the context bundle is built from: its turns and capsules.
func moved(read, locked *ragd.ConversationState) bool {
	return read.Conversation.Turn != locked.Conversation.Turn || read.Conversation.ABArm != locked.Conversation.ABArm ||
		!slices.EqualFunc(read.Capsules, locked.Capsules, func(a, b ragd.Capsule) bool { return a.First == b.First && a.Last == b.Last && a.Text == b.Text })
}
