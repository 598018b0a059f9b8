package ask

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/focus"
)

// gazetteers keeps each tenant's gazetteer, built from the tenant's titles and rebuilt in the
// background when the index has moved on (new or deleted documents); turns use the one at hand
// meanwhile, so no turn waits for a rebuild after the first. A tenant's gazetteer holds its own
// titles only: the focus a conversation shows never names another tenant's documents.
type gazetteers struct {
	mu     sync.Mutex
	tenant map[uuid.UUID]*tenantGazetteer
	// first shares a tenant's first build among the turns that arrive before it is done, so a
	// fresh server's first concurrent turns build it once rather than each their own.
	first singleflight.Group
}

type tenantGazetteer struct {
	g        *gazetteer
	seq      int64 // the index sequence g was built at
	building bool
}

// gazetteer is the focus's gazetteer with how many chunks each title has.
type gazetteer struct {
	*focus.Gazetteer
	chunks map[string]int
}

// gazetteer returns the current gazetteer of the context's tenant, building its first one.
func (p *Pipeline) gazetteer(ctx context.Context) (*gazetteer, error) {
	principal := ragd.PrincipalOf(ctx)
	seq := p.Index.TenantSeq(ctx)
	p.gaz.mu.Lock()
	if p.gaz.tenant == nil {
		p.gaz.tenant = map[uuid.UUID]*tenantGazetteer{}
	}
	tg := p.gaz.tenant[principal.Tenant]
	if tg == nil {
		tg = &tenantGazetteer{}
		p.gaz.tenant[principal.Tenant] = tg
	}
	g := tg.g
	if g != nil && tg.seq != seq && !tg.building {
		tg.building = true
		go p.rebuildGazetteer(principal, tg)
	}
	p.gaz.mu.Unlock()
	if g != nil {
		return g, nil
	}
	v, err, _ := p.gaz.first.Do(principal.Tenant.String(), func() (any, error) {
		// The build is every waiting turn's, not only this one's: the first turn's client going
		// away must not fail the others (the principal stays, for the tenant's rows).
		g, err := p.buildGazetteer(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		p.gaz.mu.Lock()
		defer p.gaz.mu.Unlock()
		if tg.g == nil {
			tg.g, tg.seq = g, seq
		}
		return tg.g, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*gazetteer), nil
}

func (p *Pipeline) rebuildGazetteer(principal ragd.Principal, tg *tenantGazetteer) {
	ctx, cancel := context.WithTimeout(ragd.WithPrincipal(context.Background(), principal), 5*time.Minute)
	defer cancel()
	seq := p.Index.TenantSeq(ctx)
	g, err := p.buildGazetteer(ctx)
	p.gaz.mu.Lock()
	defer p.gaz.mu.Unlock()
	tg.building = false
	if err != nil {
		p.Logger.ErrorContext(ctx, "rebuilding the focus gazetteer failed; the previous one stays", slog.String("error", err.Error()))
		return
	}
	tg.g, tg.seq = g, seq
}

// buildGazetteer reads the corpus's titles and their words' frequencies.
func (p *Pipeline) buildGazetteer(ctx context.Context) (*gazetteer, error) {
	ts, err := p.Store.Titles(ctx)
	if err != nil {
		return nil, fmt.Errorf("ask: focus: %w", err)
	}
	titles := make([]string, len(ts))
	chunks := make(map[string]int, len(ts))
	for i, t := range ts {
		titles[i] = t.Title
		chunks[t.Title] = t.Chunks
	}
	words := focus.Words(titles, p.Index.Terms)
	all, err := p.Index.DocFreq(ctx, "_all", words)
	if err != nil {
		return nil, fmt.Errorf("ask: focus: %w", err)
	}
	inTitle, err := p.Index.DocFreq(ctx, "title", words)
	if err != nil {
		return nil, fmt.Errorf("ask: focus: %w", err)
	}
	stats := make(map[string]focus.TermStats, len(words))
	for _, w := range words {
		stats[w] = focus.TermStats{DF: all[w], DFTitle: inTitle[w]}
	}
	return &gazetteer{Gazetteer: focus.NewGazetteer(titles, p.Index.Terms, stats, p.cfg.Gazetteer), chunks: chunks}, nil
}

// turnFocus is what the focus stage learned of a turn: the conversation's focus as the turn
// finds it, how much the turn leans on it, and what the turn itself names.
type turnFocus struct {
	// prior is the focus as of this turn, before its own mentions: the last turn's, with the
	// replies recorded since read in, decayed one turn.
	prior focus.Focus
	// replies are the mentions of the replies recorded since the last turn's focus, and read
	// the last turn whose reply they include.
	replies []focus.Mention
	read    int
	// own are the user's mentions (the titles the message names, and its telling words).
	own  []focus.Mention
	lean float64
	// info is how much the turn says by itself, in words (Index.Information); 0 when unknown
	// or not needed.
	info float64
	// chunks says how many chunks each title has.
	chunks map[string]int
}

// focusFor reads the turn against the conversation's focus. It never fails a turn: a focus
// that cannot be read (the gazetteer could not be built) is logged and left out.
func (p *Pipeline) focusFor(ctx context.Context, message string, st *ragd.ConversationState, cv conversation) turnFocus {
	number := st.Conversation.Turn + 1
	tf := turnFocus{prior: st.Focus}
	g, err := p.gazetteer(ctx)
	if err != nil {
		p.Logger.WarnContext(ctx, "conversation focus unavailable for this turn", slog.String("error", err.Error()))
		return tf
	}
	tf.chunks = g.chunks
	tf.replies, tf.read = replyMentions(g.Gazetteer, cv.messages, st.Focus.Replies, p.docFreq(ctx))
	tf.prior = readReplies(st.Focus, tf.replies, tf.read, p.cfg.Focus).At(number, p.cfg.Focus)
	links := g.Link(message, p.docFreq(ctx))
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = l.Name
		tf.own = append(tf.own, focus.Mention{Text: l.Name, Kind: focus.Entity, Origin: focus.FromUser, Turn: number})
	}
	if p.cfg.FocusSubjects > 0 {
		if words, err := p.Index.Keywords(ctx, message, strings.Join(names, " "), p.cfg.FocusSubjects); err == nil {
			for _, w := range words {
				tf.own = append(tf.own, focus.Mention{Text: strings.ToLower(w), Kind: focus.Subject, Origin: focus.FromUser, Turn: number})
			}
		}
	}
	tf.lean = focus.Lean(message, len(links) > 0, p.cfg.FocusImplicit)
	if tf.lean > 0 && p.cfg.FocusOwnInfo > 0 && tf.addsName(p.cfg) {
		info, err := p.Index.Information(ctx, message)
		if err != nil {
			p.Logger.WarnContext(ctx, "how much the turn says by itself is unknown; its focus searches keep their weight", slog.String("error", err.Error()))
		}
		tf.info = info
	}
	return tf
}

// titles returns the titles of the corpus the turn names itself, for the intent guard: a turn
// that names one asks about it, not only about the sources already found.
func (tf turnFocus) titles() []string {
	var out []string
	for _, m := range tf.own {
		if m.Kind == focus.Entity {
			out = append(out, m.Text)
		}
	}
	return out
}

// replyMentions links the replies recorded for turns after the focus's last read one, and
// returns the last turn whose reply it read (after, when none).
func replyMentions(g *focus.Gazetteer, msgs []ragd.Message, after int, df func([]string) map[string]int) ([]focus.Mention, int) {
	var out []focus.Mention
	read := after
	for _, m := range msgs {
		if m.Role != "assistant" || m.ReplyRecordedAt == nil || m.Turn <= after {
			continue
		}
		for _, l := range g.Link(m.Content, df) {
			out = append(out, focus.Mention{Text: l.Name, Kind: focus.Entity, Origin: focus.FromReply, Turn: m.Turn})
		}
		read = max(read, m.Turn)
	}
	return out, read
}

// readReplies reads reply mentions into a focus and remembers the last reply read.
func readReplies(f focus.Focus, ms []focus.Mention, read int, cfg focus.Config) focus.Focus {
	f = f.Add(ms, cfg)
	f.Replies = max(f.Replies, read)
	return f
}

// docFreq reports how many of ctx's tenant's chunks have each word, for telling a typo from a
// word; nil when the index cannot say (no typo is then allowed).
func (p *Pipeline) docFreq(ctx context.Context) func(words []string) map[string]int {
	return func(words []string) map[string]int {
		freq, err := p.Index.DocFreq(ctx, "_all", words)
		if err != nil {
			return nil
		}
		return freq
	}
}

// focusSearches are the searches of a turn that leans on the conversation, one per leading
// entity of the focus, weighted by how much the turn leans and how heavy the entity is next to
// the heaviest. An entity with more chunks than a search returns (a hotel and its reviews) is
// searched within: the question among its documents. One with fewer (a page of a few passages)
// is not: restricted to it, the search would return the whole title whatever the question asks,
// so its name is added to the question instead, as a rewrite would.
//
// The two differ in what they can do to a turn that says much by itself. Searched within, every
// hit still matches the turn's words: the focus only says where to look. A name added to the
// question is words of its own, and a page can rank on the name alone whatever the turn asks; a
// rewrite is needed as much as the turn leaves out. So the added name's search weighs less as
// the turn says more (focus.Said, FocusOwnInfo). On dev data, measured per turn against the
// focus off: the added name gained on MTRAG turns that say little and lost on those that say
// more (clapnq and govt both), while the search within gained on DSTC11 at every amount said,
// and scaling it too cost DSTC11 0.086 nDCG@5.
func focusSearches(cfg Config, query string, tf turnFocus) []search {
	if cfg.FocusWeight == 0 || tf.lean == 0 {
		return nil
	}
	var out []search
	lead := tf.prior.Leading(cfg.FocusRatio, cfg.FocusEntities)
	for i, e := range lead {
		name := "focus-bm25"
		if i > 0 {
			name = fmt.Sprintf("focus%d-bm25", i+1)
		}
		s := search{name: name, weight: cfg.FocusWeight * tf.lean * e.Weight / lead[0].Weight, text: query, title: e.Text}
		if byName(cfg, tf.chunks[e.Text]) {
			s.text, s.title = query+" "+e.Text, ""
			s.weight *= focus.Said(tf.info, cfg.FocusOwnInfo)
		}
		out = append(out, s)
	}
	return out
}

// byName reports whether the focus search for a title of chunks chunks adds its name to the
// question rather than searching within it (focusSearches).
func byName(cfg Config, chunks int) bool { return chunks <= cfg.FreshK }

// addsName reports whether one of the turn's focus searches adds a name to the question: only
// then does how much the turn says by itself weigh (focusSearches).
func (tf turnFocus) addsName(cfg Config) bool {
	for _, e := range tf.prior.Leading(cfg.FocusRatio, cfg.FocusEntities) {
		if byName(cfg, tf.chunks[e.Text]) {
			return true
		}
	}
	return false
}

// nextFocus is the focus a turn records, from the focus as locked: the replies read, decayed to
// the turn, then what the user named, and the titles and headings of the sources the turn
// returned as subjects (each by its score relative to the best). Sources are subjects, not
// entities: they are what retrieval found, not what anyone said, and searching with them
// measured worse (MTRAG govt -0.014 nDCG@5 with source titles as entities).
func nextFocus(locked focus.Focus, tf turnFocus, number int, sources []Source, cfg focus.Config) focus.Focus {
	f := readReplies(locked, tf.replies, tf.read, cfg).At(number, cfg).Add(tf.own, cfg)
	var ms []focus.Mention
	for _, s := range sources {
		strength := 1.0
		if top := sources[0].Score; top > 0 {
			strength = s.Score / top
		}
		heading := s.Heading
		if i := strings.LastIndex(heading, ">"); i >= 0 {
			heading = heading[i+1:]
		}
		for _, t := range []string{s.Title, strings.TrimSpace(heading)} {
			if t != "" {
				ms = append(ms, focus.Mention{Text: t, Kind: focus.Subject, Origin: focus.FromSource, Turn: number, Strength: strength})
			}
		}
	}
	f = f.Add(ms, cfg)
	f.Turn = number
	return f
}

// Focus returns what a conversation is about as of its last turn, with the replies recorded
// since read in; with the focus off (FocusWeight 0), the focus as stored.
func (p *Pipeline) Focus(ctx context.Context, st *ragd.ConversationState, msgs []ragd.Message) (focus.Focus, error) {
	if p.cfg.FocusWeight == 0 {
		return st.Focus, nil
	}
	g, err := p.gazetteer(ctx)
	if err != nil {
		return focus.Focus{}, err
	}
	ms, read := replyMentions(g.Gazetteer, msgs, st.Focus.Replies, p.docFreq(ctx))
	return readReplies(st.Focus, ms, read, p.cfg.Focus), nil
}
