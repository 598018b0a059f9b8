package ask

// Config and wiring: the pipeline's numbers with their defaults and checks, its collaborators,
// and New, which puts them together.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/focus"
	"github.com/ragd/ragd/fuse"
	"github.com/ragd/ragd/mode"
)

// Config holds the pipeline's numbers; each is a product default, not a literal in code.
type Config struct {
	// FreshK is how many chunks each fresh retriever returns every turn.
	FreshK int
	// RRFK is the reciprocal rank fusion constant (ranks counted from 1).
	RRFK int
	// Weights of each list in fusion.
	BM25Weight   float64
	VectorWeight float64
	// RerankTop is how many fused candidates the cross-encoder scores.
	RerankTop int
	// KeepMin and KeepMax bound the sources a turn returns: KeepMin always (when found), and up
	// to KeepMax while the next candidate's score ties the KeepMin-th within TieMargin.
	KeepMin   int
	KeepMax   int
	TieMargin float64
	// FactsPerSource is how many key sentences the fact sheet gives each source.
	FactsPerSource int
	// MaxMessageBytes is the longest user message accepted.
	MaxMessageBytes int
	// MaxPins is the most documents one conversation may have pinned: every pin is re-scored and
	// fused on every turn, so pins are bounded work.
	MaxPins int
	// HistoryMessages is how many of a conversation's latest messages a turn reads (with its
	// current goal's first): earlier goals come as their capsules, and the sticky invariants of
	// every user message are kept with the conversation, so a turn's work does not grow with the
	// conversation. 0 reads every message.
	HistoryMessages int

	// Carry holds the carry-over rules' numbers (tau, decay, idle turns, cap).
	Carry carry.Config
	// CarryWeight is the weight of the carried list in fusion on drill-downs, ReferWeight on
	// turns about what was found (same-sources, and comparisons that point back: see referent).
	// On MTRAG follow-ups only 8-22% of a turn's relevant passages were relevant to an earlier
	// turn: there the conversation helps most by naming the subject (the context search), and
	// carried passages are a light list; a turn that points at them gets them at full weight.
	CarryWeight float64
	ReferWeight float64
	// IntentThreshold is the confidence under which a turn's intent is taken as drill-down, the
	// intent that neither drops sources nor restricts retrieval.
	IntentThreshold float64
	// SameSourcesFreshWeight is the weight of searches over everything in a same-sources turn,
	// whose searches within the carried sources weigh 1: strongly favoured, not exclusive.
	SameSourcesFreshWeight float64
	// CompareWeight is the weight of each compared entity's searches.
	CompareWeight float64
	// ContextWeight is the weight of the context search: BM25 on the question plus the telling
	// words of the previous turn and of the carried sources' titles, a list of its own beside
	// the question's (0 turns it off). It names what a follow-up leaves implicit ("when do
	// they play?") without replacing the question's own search. A turn the focus searches runs
	// none (see plan).
	ContextWeight float64
	// ContextTitles is how many carried sources' titles the context search draws words from, and
	// ContextTerms how many words it adds.
	ContextTitles int
	ContextTerms  int
	// Mode tunes mode detection (threshold 0.40, smoothing over the last 3 modes).
	Mode mode.Config
	// Rules are the operator's rules, placed in every bundle's rules section after the sticky
	// invariants.
	Rules []string
	// Compact chooses what of the conversation a bundle sees (goal-boundary compaction by
	// default) and bounds capsules.
	Compact compact.Config
	// Experiment is the A/B experiment conversations are assigned to at their first turn.
	Experiment experiment.Config
	// Graph turns on the mini knowledge graph: follow-ups whose entities came up before get a
	// list of the chunks that mention them and their neighbours. It needs a corpus ingested with
	// entities (ingest.Config.Graph); without them the list is empty.
	Graph bool
	// KGNeighbours is how many 1-hop neighbours of the repeated entities the graph adds, KGChunks
	// the most chunks its list brings into fusion, and KGWeight that list's weight.
	KGNeighbours int
	KGChunks     int
	KGWeight     float64
	// AnaphoraBoost multiplies the context search's weight for a question that leans on the
	// conversation (a pronoun, or three words or fewer).
	AnaphoraBoost float64
	// PinChunks is how many chunks of a newly pinned document are re-scored to represent it;
	// SourceChunks how many chunks per carried document a same-sources search looks in.
	PinChunks    int
	SourceChunks int

	// Focus holds the conversation focus's numbers: its decay per turn, the weight of a name by
	// where it was said (user, recorded reply, source title).
	Focus focus.Config
	// Gazetteer holds the thresholds by which the focus recognises the corpus's titles in text.
	Gazetteer focus.GazetteerConfig
	// FocusWeight is the weight of the focus search, times how much the turn leans on the
	// conversation: 1 when it points back ("are their rooms clean?"), FocusImplicit when it names
	// nothing of its own, 0 when it names a title itself. The focus search is the question among
	// the documents of what the conversation is about (its heaviest entity, and those within
	// FocusRatio of its weight, at most FocusEntities). 0 turns the focus off: turns neither
	// track it nor search with it.
	FocusWeight   float64
	FocusImplicit float64
	FocusRatio    float64
	FocusEntities int
	// FocusOwnInfo is how much a turn may say by itself (the information of its words, in words:
	// a word only one chunk has counts 1) and still get the full weight of a focus search that
	// adds a title's name to its words; a turn that says more gets less, in proportion
	// (focus.Said). A search within a title's chunks keeps its weight. 0 turns this off.
	FocusOwnInfo float64
	// FocusSubjects is how many telling words of each user turn the focus keeps as subjects.
	FocusSubjects int
}

// DefaultConfig returns the product spec's numbers. Every field of a Config means what it says,
// zero included: a list weight of 0 turns that list off (it is neither searched nor fused), a
// control ratio of 0 puts every conversation in treatment, a mode threshold of 0 never falls back.
// Start from DefaultConfig and change what differs; the zero Config is not a usable one.
func DefaultConfig() Config {
	return Config{
		FreshK:          40,
		RRFK:            fuse.DefaultK,
		BM25Weight:      1,
		VectorWeight:    1,
		RerankTop:       40,
		KeepMin:         8,
		KeepMax:         10,
		TieMargin:       0.01,
		FactsPerSource:  2,
		MaxMessageBytes: 8192,
		MaxPins:         32,
		HistoryMessages: 40,
		Carry:           carry.DefaultConfig(),
		// Chosen on MTRAG (BM25, all three domains): see CarryWeight.
		CarryWeight:            0.01,
		ReferWeight:            0.3,
		IntentThreshold:        0.5,
		SameSourcesFreshWeight: 0.25,
		CompareWeight:          1,
		ContextWeight:          0.5,
		ContextTitles:          2,
		ContextTerms:           3,
		Mode:                   mode.DefaultConfig(),
		Experiment:             experiment.DefaultConfig(),
		Compact:                compact.DefaultConfig(),
		KGNeighbours:           5,
		KGChunks:               10,
		KGWeight:               0.5,
		AnaphoraBoost:          2,
		PinChunks:              20,
		SourceChunks:           500,
		Focus:                  focus.DefaultConfig(),
		Gazetteer:              focus.DefaultGazetteerConfig(),
		FocusWeight:            2,
		FocusImplicit:          0.5,
		FocusRatio:             0.8,
		FocusEntities:          3,
		FocusSubjects:          3,
		FocusOwnInfo:           1,
	}
}

// Validate checks the numbers. It reports every bad field at once, joined in one flat
// errors.Join, each as a *ragd.InputError
// whose Field is the Config field's name ("Carry.Decay" for a nested one), so a caller that set
// the field from a flag can name the flag.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, ragd.Invalidf(field, format, args...)) }
	if c.FreshK < 1 || c.FreshK > 1000 {
		bad("FreshK", "must be in 1..1000, got %d", c.FreshK)
	}
	if c.RRFK < 1 {
		bad("RRFK", "must be at least 1, got %d", c.RRFK)
	}
	if c.RerankTop < 1 {
		bad("RerankTop", "must be at least 1, got %d", c.RerankTop)
	}
	if c.KeepMin < 1 || c.KeepMax < c.KeepMin {
		bad("KeepMin", "keep %d..%d: need 1 <= min <= max", c.KeepMin, c.KeepMax)
	}
	if c.TieMargin < 0 {
		bad("TieMargin", "must not be negative, got %g", c.TieMargin)
	}
	if c.FactsPerSource < 1 || c.FactsPerSource > 10 {
		bad("FactsPerSource", "must be in 1..10, got %d", c.FactsPerSource)
	}
	if c.MaxPins < 1 {
		bad("MaxPins", "must be at least 1, got %d", c.MaxPins)
	}
	if c.HistoryMessages < 0 {
		bad("HistoryMessages", "must be 0 (every message) or more, got %d", c.HistoryMessages)
	}
	if c.MaxMessageBytes < 1 {
		bad("MaxMessageBytes", "must be at least 1, got %d", c.MaxMessageBytes)
	}
	type weight struct {
		field string
		w     float64
	}
	for _, w := range []weight{{"BM25Weight", c.BM25Weight}, {"VectorWeight", c.VectorWeight},
		{"CarryWeight", c.CarryWeight}, {"ReferWeight", c.ReferWeight}, {"CompareWeight", c.CompareWeight},
		{"SameSourcesFreshWeight", c.SameSourcesFreshWeight}, {"ContextWeight", c.ContextWeight},
		{"KGWeight", c.KGWeight}, {"AnaphoraBoost", c.AnaphoraBoost}, {"FocusWeight", c.FocusWeight}} {
		if w.w < 0 || math.IsNaN(w.w) || math.IsInf(w.w, 0) {
			bad(w.field, "must be a number >= 0 (0 turns it off), got %g", w.w)
		}
	}
	if c.IntentThreshold < 0 || c.IntentThreshold > 1 {
		bad("IntentThreshold", "must be in 0..1, got %g", c.IntentThreshold)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"ContextTitles", c.ContextTitles}, {"ContextTerms", c.ContextTerms}, {"KGNeighbours", c.KGNeighbours},
		{"KGChunks", c.KGChunks}, {"FocusEntities", c.FocusEntities}, {"FocusSubjects", c.FocusSubjects}} {
		if n.v < 0 {
			bad(n.field, "must not be negative, got %d", n.v)
		}
	}
	if c.PinChunks < 1 {
		bad("PinChunks", "must be at least 1, got %d", c.PinChunks)
	}
	if c.SourceChunks < 1 {
		bad("SourceChunks", "must be at least 1, got %d", c.SourceChunks)
	}
	if c.FocusImplicit < 0 || c.FocusImplicit > 1 {
		bad("FocusImplicit", "must be in 0..1, got %g", c.FocusImplicit)
	}
	if c.FocusOwnInfo < 0 || math.IsNaN(c.FocusOwnInfo) || math.IsInf(c.FocusOwnInfo, 0) {
		bad("FocusOwnInfo", "must be a number >= 0 (0 turns it off), got %g", c.FocusOwnInfo)
	}
	if c.FocusRatio <= 0 || c.FocusRatio > 1 {
		bad("FocusRatio", "must be in (0, 1], got %g", c.FocusRatio)
	}
	for _, e := range joined(c.Focus.Validate()) {
		var fe *focus.FieldError
		if errors.As(e, &fe) {
			bad("Focus."+fe.Field, "%s", fe.Reason)
		} else {
			errs = append(errs, e)
		}
	}
	errs = append(errs, nested("Carry", c.Carry.Validate())...)
	errs = append(errs, nested("Mode", c.Mode.Validate())...)
	errs = append(errs, nested("Experiment", c.Experiment.Validate())...)
	errs = append(errs, nested("Compact", c.Compact.Validate())...)
	return errors.Join(errs...)
}

// nested lists a nested config's errors with their fields prefixed by the name of the field
// holding it, so Validate's joined errors stay one flat list.
func nested(prefix string, err error) []error {
	var out []error
	for _, e := range joined(err) {
		if ie, ok := e.(*ragd.InputError); ok {
			e = &ragd.InputError{Field: prefix + "." + ie.Field, Reason: ie.Reason}
		}
		out = append(out, e)
	}
	return out
}

// joined lists the errors an errors.Join holds (one level), or err itself.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// TextIndex is the BM25 index.
type TextIndex interface {
	Search(ctx context.Context, text string, n int) ([]ragd.Hit, error)
	SearchIn(ctx context.Context, text string, n int, chunks []int64) ([]ragd.Hit, error)
	SearchTitle(ctx context.Context, text, title string, n int) ([]ragd.Hit, error)
	Coverage(ctx context.Context, query string, texts []string) ([]float64, error)
	Keywords(ctx context.Context, text, exclude string, n int) ([]string, error)
	// Information is how much a text says by itself, in words (see index.Index.Information).
	Information(ctx context.Context, text string) (float64, error)
	// Terms, DocFreq and TenantSeq are what the focus's gazetteer reads: words as BM25 analyses
	// them, their frequencies among the tenant's chunks, and the sequence the tenant's index is
	// caught up to (a new one means new titles).
	Terms(text string) []string
	DocFreq(ctx context.Context, field string, terms []string) (map[string]int, error)
	TenantSeq(ctx context.Context) int64
}

// Embedder embeds the query for vector search.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reranker scores passages against a query with a cross-encoder.
type Reranker interface {
	Score(ctx context.Context, query string, passages []string) ([]float32, error)
}

// ErrNoVectors means a method needs vector search but no embedding model is configured.
var ErrNoVectors = fmt.Errorf("%w: no embedding model is configured, vector search is off", ragd.ErrUnavailable)

// ErrNoReranker means a method needs the cross-encoder but none is configured.
var ErrNoReranker = fmt.Errorf("%w: no cross-encoder is configured, reranking is off", ragd.ErrUnavailable)

// Deps are the pipeline's collaborators. Index and Store are required. Embedder, Reranker and
// Answerer may be nil: vector search, reranking or answer generation is then skipped, and
// responses say so.
type Deps struct {
	Index    TextIndex
	Store    ragd.Store
	Embedder Embedder
	Reranker Reranker
	Answerer Answerer
	Intent   IntentClassifier
	// Monitors watch the mode distribution across conversations; nil fields are not watched.
	Monitors Monitors
	// Boundaries decides where goals start; nil is compact.Shift with its default threshold.
	Boundaries compact.Detector
	// Summarizer writes the capsules of finished goals (an LLM); nil, or a failing one, leaves
	// them to compact.Extract.
	Summarizer compact.Summarizer
	// BuildBundle builds context bundles; nil is bundle.Build. The pipeline checks what it
	// returns for lost invariants and rebuilds with bundle.Build and GENERAL budgets.
	BuildBundle func(bundle.Input) bundle.Bundle
	Logger      *slog.Logger
}

// Pipeline runs turns.
type Pipeline struct {
	cfg      Config
	strategy compact.Strategy
	gaz      *gazetteers
	Deps
}

// New returns a pipeline.
func New(cfg Config, d Deps) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	if d.Index == nil || d.Store == nil {
		return nil, errors.New("ask: an index and a store are required")
	}
	if cfg.BM25Weight == 0 && (cfg.VectorWeight == 0 || d.Embedder == nil) {
		return nil, fmt.Errorf("ask: %w", ragd.Invalidf("BM25Weight", "is 0 and there is no vector search: a turn would retrieve nothing fresh"))
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.BuildBundle == nil {
		d.BuildBundle = bundle.Build
	}
	if d.Boundaries == nil {
		d.Boundaries = compact.Shift{}
	}
	strategy, err := compact.New(cfg.Compact)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	return &Pipeline{cfg: cfg, strategy: strategy, gaz: &gazetteers{}, Deps: d}, nil
}
