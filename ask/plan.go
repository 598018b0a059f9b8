package ask

// The turn plan: what the turn is (its intent, the shown sources it refers to) and, from that,
// which lists it fuses with which weights. plan is a pure function of values; lookups reads
// from the index and the store what the plan's lists are made of.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/fuse"
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

// IntentInput is what a turn's intent is classified from.
type IntentInput struct {
	Text string
	// History holds the conversation's previous user turns, oldest first.
	History []string
	// Sources are short descriptions of the sources the conversation carries.
	Sources []string
	// Focus holds the terms of the conversation's focus (what it is about), heaviest first.
	Focus []string
	// Titles are the titles of the corpus the turn names itself; none when the focus is off.
	Titles []string
}

// IntentClassifier classifies a turn. It decides, with the evidence of the turn's words, whether
// the turn may drop the carried sources (new-topic) or narrow retrieval to them (same-sources).
type IntentClassifier interface {
	Classify(IntentInput) Intent
}

// intent decides what the turn is: references to what the conversation showed are resolved
// before any classifier, and make it a same-sources turn; else the classifier says (see
// classify). tf is the turn's focus, nil when the focus is off.
func (p *Pipeline) intent(message string, st *ragd.ConversationState, cv conversation, tf *turnFocus) (Intent, refer.Resolution) {
	refs := references(message, cv, st)
	if len(refs.Refers) > 0 {
		return Intent{Label: SameSources, Confidence: 1}, refs
	}
	var titles []string
	if tf != nil {
		titles = tf.titles()
	}
	return p.classify(IntentInput{Text: message, History: cv.history, Titles: titles}, st.Sources, st.Focus), refs
}

// classify returns the turn's intent, given the carried sources and focus to describe to the
// classifier. A first turn has no topic to keep: it is a new topic. Without a classifier every
// later turn is a drill-down, the intent that keeps both carried sources and fresh retrieval.
func (p *Pipeline) classify(in IntentInput, sources []ragd.ConversationSource, f focus.Focus) Intent {
	if len(in.History) == 0 {
		return Intent{Label: NewTopic, Confidence: 1}
	}
	if p.Intent == nil {
		return Intent{Label: DrillDown, Confidence: 0}
	}
	for _, s := range sources {
		if !s.Carried && !s.Pinned {
			continue
		}
		for _, f := range s.Facts {
			in.Sources = append(in.Sources, f.Text)
		}
	}
	// The focus is evidence against a new topic: a turn that names what the conversation is
	// about continues it.
	in.Focus = make([]string, 0, len(f.Terms))
	for _, t := range f.Terms {
		in.Focus = append(in.Focus, t.Text)
	}
	out := p.Intent.Classify(in)
	if out.Confidence < p.cfg.IntentThreshold {
		// An unsure classifier should not drop sources or restrict retrieval. A sure new-topic
		// that the guard turned into an unsure label still tells goal boundaries the user moved.
		unsure := Intent{Label: DrillDown, Confidence: out.Confidence}
		if out.NewTopic >= p.cfg.IntentThreshold {
			unsure.NewTopic = out.NewTopic
		}
		return unsure
	}
	return out
}

// search is one retrieval of a turn: BM25 or vector, over everything or within given chunks or
// documents. Its hits become a list named name in fusion.
type search struct {
	name   string
	weight float64
	text   string
	vector bool
	chunks []int64     // BM25 among these chunks only; nil searches everything
	docs   []uuid.UUID // vector among these documents only; nil searches everything
	title  string      // BM25 among the chunks whose title has these words; "" searches everything
}

// turnPlan is what a turn fuses: the searches it runs, and the extra lists that arrive whole
// (carried sources, the graph's chunks), each with its weight.
type turnPlan struct {
	searches []search
	extra    []fuse.List
}

// planInput is what a turn's plan is decided from.
type planInput struct {
	query  string
	intent Intent
	vector bool // vector search is on
	picks  []carry.Pick
	// within is what a same-sources turn searches within: the carried documents and their
	// chunks (lookups); no documents on other turns.
	within  []uuid.UUID
	chunks  []int64
	graph   []int64    // the graph's chunks for the turn (lookups); none leaves the graph out
	context string     // the context search's text (lookups); "" runs none
	focus   *turnFocus // nil: the focus is off
}

// focused returns the focus searches of a turn: none on a new topic, which leans on nothing.
func focused(cfg Config, in planInput) []search {
	if in.focus == nil || in.intent.Label == NewTopic {
		return nil
	}
	return focusSearches(cfg, in.query, *in.focus)
}

// plan decides the turn's lists by intent: every turn searches the question itself; a compare
// turn also searches each compared entity; a same-sources turn searches within the carried
// sources at full weight and everywhere else at a reduced one; carried sources enter as their
// own list; a turn that continues the conversation adds the graph's list, and the focus searches
// or else the context search.
func plan(cfg Config, in planInput) turnPlan {
	var pl turnPlan
	freshWeight := 1.0
	if len(in.within) > 0 {
		freshWeight = cfg.SameSourcesFreshWeight
		pl.searches = append(pl.searches, search{name: "sources-bm25", weight: cfg.BM25Weight, text: in.query, chunks: in.chunks})
		if in.vector {
			pl.searches = append(pl.searches, search{name: "sources-vector", weight: cfg.VectorWeight, text: in.query, vector: true, docs: in.within})
		}
	}
	pl.searches = append(pl.searches, freshSearches(cfg, in.query, in.vector, freshWeight)...)
	if in.intent.Label == Compare {
		for i, e := range in.intent.Entities {
			name := fmt.Sprintf("compare%d", i+1)
			pl.searches = append(pl.searches, search{name: name + "-bm25", weight: cfg.CompareWeight, text: e})
			if in.vector {
				pl.searches = append(pl.searches, search{name: name + "-vector", weight: cfg.CompareWeight, text: e, vector: true})
			}
		}
	}
	if len(in.picks) > 0 {
		w := cfg.CarryWeight
		if referent(in.intent, in.query) {
			w = cfg.ReferWeight
		}
		l := fuse.List{Name: "carry", Weight: w}
		for _, pk := range in.picks {
			l.IDs = append(l.IDs, pk.ChunkID)
		}
		pl.extra = append(pl.extra, l)
	}
	if len(in.graph) > 0 {
		pl.extra = append(pl.extra, fuse.List{Name: "kg", Weight: cfg.KGWeight, IDs: in.graph})
	}
	// Both the focus searches and the context search name what a follow-up leaves implicit: the
	// focus by what the conversation is about, the context search by the telling words of the
	// previous turn and of the carried titles, added to the question. When the focus searches a
	// turn, the context search steps aside: beside the question's own search it gives the
	// question's words a second vote, against the focus's list (on DSTC11 dev, where a follow-up
	// asks about the entity named before, running both cost 0.079 nDCG@5).
	fs := focused(cfg, in)
	if in.context != "" && len(fs) == 0 {
		w := cfg.ContextWeight
		if focus.PointsBack(in.query) {
			w *= cfg.AnaphoraBoost
		}
		pl.searches = append(pl.searches, search{name: "context-bm25", weight: w, text: in.context})
	}
	pl.searches = append(pl.searches, fs...)
	return pl
}

// referent reports whether a turn is about its carried sources, whatever its words score against
// them: a same-sources turn (one that refers to shown sources, or anchors on them), and a
// comparison that points back for one of its sides ("is it the same for earthquakes?"). Their
// carried sources all enter (no tau) and weigh ReferWeight. A comparison that points at nothing
// ("what are limit orders vs market orders?", "which state has more wildfires?") compares what
// it names, each side searched: it carries the conversation's sources as a drill-down does (on
// MTRAG dev, making the carried sources the referent of every comparison cost all three domains).
func referent(in Intent, message string) bool {
	return in.Label == SameSources || (in.Label == Compare && focus.PointsBack(message))
}

// freshSearches are the searches every turn runs on the question itself.
func freshSearches(cfg Config, query string, vector bool, weight float64) []search {
	out := []search{{name: "bm25", weight: weight * cfg.BM25Weight, text: query}}
	if vector {
		out = append(out, search{name: "vector", weight: weight * cfg.VectorWeight, text: query, vector: true})
	}
	return out
}

// lookups reads what the plan's lists are made of, only for the lists the turn can have: the
// chunks of the carried documents a same-sources turn searches within; and, for a turn that
// continues the conversation, the graph's chunks and the context search's text (unless the focus
// searches the turn). focusChunks are the cited chunks of the conversation's carried sources
// (focusOf); tf is the turn's focus, nil when the focus is off.
func (p *Pipeline) lookups(ctx context.Context, query string, history []string, in Intent, picks []carry.Pick,
	focusChunks []int64, tf *turnFocus, cache *chunkCache) (planInput, error) {
	out := planInput{query: query, intent: in, vector: p.Embedder != nil, picks: picks, focus: tf}
	if in.Label == SameSources && len(picks) > 0 {
		out.within = make([]uuid.UUID, len(picks))
		for i, pk := range picks {
			out.within[i] = pk.DocID
		}
		chunks, err := p.Store.ActiveChunkIDs(ctx, out.within, p.cfg.SourceChunks)
		if err != nil {
			return out, fmt.Errorf("ask: same-sources: %w", err)
		}
		for _, d := range out.within {
			out.chunks = append(out.chunks, chunks[d]...)
		}
	}
	continues := len(history) > 0 && in.Label != NewTopic
	if p.cfg.Graph && continues {
		ids, err := p.graphChunks(ctx, query, history, picks, cache)
		if err != nil {
			return out, err
		}
		out.graph = ids
	}
	if p.cfg.ContextWeight > 0 && continues && len(focused(p.cfg, out)) == 0 {
		text, err := p.contextText(ctx, query, history[len(history)-1], focusChunks, cache)
		if err != nil {
			return out, err
		}
		if text != query {
			out.context = text
		}
	}
	return out, nil
}

// graphChunks is the mini knowledge graph's contribution to a turn: when entities of the question
// came up before (in earlier questions or the carried sources' facts), the chunks that mention
// them and their strongest 1-hop neighbours, a small capped list.
func (p *Pipeline) graphChunks(ctx context.Context, query string, history []string, picks []carry.Pick, cache *chunkCache) ([]int64, error) {
	earlier := make([][]kg.Entity, 0, len(history)+1)
	for _, h := range history {
		earlier = append(earlier, kg.Extract(h, nil))
	}
	if len(picks) > 0 {
		ids := make([]int64, len(picks))
		for i, pk := range picks {
			ids[i] = pk.ChunkID
		}
		chunks, err := cache.get(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, c := range chunks {
			earlier = append(earlier, kg.Extract(c.Title+"\n"+c.Text, nil))
		}
	}
	repeated := kg.Repeated(kg.Extract(query, nil), earlier)
	if len(repeated) == 0 {
		return nil, nil
	}
	names := make([]string, len(repeated))
	for i, e := range repeated {
		names[i] = e.Name
	}
	neighbours, err := p.Store.Neighbours(ctx, names, p.cfg.KGNeighbours)
	if err != nil {
		return nil, fmt.Errorf("ask: graph: %w", err)
	}
	for _, n := range neighbours {
		names = append(names, n.Name)
	}
	ids, err := p.Store.EntityChunks(ctx, names, p.cfg.KGChunks)
	if err != nil {
		return nil, fmt.Errorf("ask: graph: %w", err)
	}
	return ids, nil
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
// turn (the user's question and the recorded reply) and of the titles of the conversation's
// focus, among those the question lacks: what a follow-up leaves implicit ("when do they play?"
// after a question about the Arizona Cardinals). The question's own search runs beside it, so
// the added words can only add votes.
func (p *Pipeline) contextText(ctx context.Context, query, previous string, ids []int64, cache *chunkCache) (string, error) {
	source := previous
	if len(ids) > 0 {
		chunks, err := cache.get(ctx, ids)
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
	words, err := p.Index.Keywords(ctx, source, query, p.cfg.ContextTerms)
	if err != nil {
		return "", fmt.Errorf("ask: context search: %w", err)
	}
	if len(words) == 0 {
		return query, nil
	}
	return query + " " + strings.Join(words, " "), nil
}
