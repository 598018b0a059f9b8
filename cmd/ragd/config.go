package main

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agnivade/levenshtein"
	"github.com/alecthomas/kong"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/carry"
	"github.com/ragd/ragd/chunk"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/encoder"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/ingest"
	"github.com/ragd/ragd/llm"
	"github.com/ragd/ragd/server"
)

// Config is every setting of ragd, read from flags and RAGD_* environment variables (the flag
// --data-dir is RAGD_DATA_DIR). Defaults are the product spec's numbers.
type Config struct {
	DataDir     string `help:"Directory for the private PostgreSQL cluster and the BM25 index." default:"./ragd-data" type:"path"`
	DatabaseURL string `help:"PostgreSQL URL ragd works with: a login that is a member of ragd_app only (see --migrate-database-url). Empty runs a private cluster inside the data directory." name:"database-url"`
	// MigrateDatabaseURL lets the serving login be one that owns nothing.
	MigrateDatabaseURL string  `help:"PostgreSQL URL of the owner of ragd's tables, for migrations (it also grants ragd_app to the login of --database-url). Empty: --database-url migrates, and so owns the tables." name:"migrate-database-url"`
	Schema             string  `help:"PostgreSQL schema holding ragd's tables (default public)."`
	IndexDir           string  `help:"BM25 index directory (default <data-dir>/index)." type:"path"`
	DBMaxConns         int     `help:"Most PostgreSQL connections this process holds (a turn uses up to two at once; each replica has its own pool)." default:"16" name:"db-max-conns"`
	EfSearch           int     `help:"Candidates the vector (HNSW) search keeps, pgvector's hnsw.ef_search (1..1000, at least --fresh-k is used): more finds more of the true nearest chunks, and costs more." default:"100" name:"ef-search"`
	BM25FrequentChunks int     `help:"A BM25 search whose question has words found in more than this many of the tenant's chunks (frequent words) reads the other words' postings and, of each frequent word, only whether the chunks that could score best have it (counted as found once; at most --bm25-candidates chunks are checked): its work stays bounded as the corpus grows, and its results can differ from the exact search's. A corpus of at most this many chunks is searched exactly. 0 turns it off (every search exact unless --bm25-frequent-share)." default:"20000" name:"bm25-frequent-chunks"`
	BM25FrequentShare  float64 `help:"Also counts as frequent a word found in more than this share of the tenant's chunks (see --bm25-frequent-chunks). 0 (the default) leaves it to --bm25-frequent-chunks; below 1." default:"0" name:"bm25-frequent-share"`
	BM25Candidates     int     `help:"Most chunks a search with frequent words checks for them, best first by what they could score (1..100000)." default:"2000" name:"bm25-candidates"`
	BM25OpenTenants    int     `help:"Most tenants' BM25 indexes held open at once (each holds open files, memory and goroutines). Past it the least recently used index no search or update is using is closed, and reopened when next needed; an index in use is never closed, so more may be open while more are in use. 0 keeps every tenant's index open (no bound)." default:"256" name:"bm25-open-tenants"`

	EmbedModel   string `help:"Directory of the sentence-embedding model (ONNX). Empty disables vector search." type:"path"`
	RerankModel  string `help:"Directory of the cross-encoder model (ONNX). Empty skips reranking." type:"path"`
	Runtime      string `help:"Model runtime: auto (ONNX Runtime if its library loads, else pure Go), onnxruntime or go." default:"auto" enum:"auto,onnxruntime,go"`
	ORTLibrary   string `help:"Path of libonnxruntime.so; empty searches the loader path and /usr/local/lib." name:"ort-library"`
	EmbedBatch   int    `help:"Texts per embedding run (16 measured fastest on ONNX Runtime, 2 cores)." default:"16"`
	RerankBatch  int    `help:"Pairs per cross-encoder run (8 measured fastest on ONNX Runtime, 2 cores)." default:"8"`
	RerankWindow int    `help:"Model tokens of each candidate the cross-encoder reads: the run of that many tokens holding most of the question's distinctive words; 0 reads the whole passage. Faster; its effect on quality is unmeasured (no real weights here)." default:"0" name:"rerank-window"`
	Threads      int    `help:"ONNX Runtime threads; 0 uses every core." default:"0"`

	LLMURL     string        `help:"Base URL of an OpenAI-compatible chat API (e.g. http://localhost:11434/v1). Empty: answers are the fact sheet." name:"llm-url"`
	LLMModel   string        `help:"Model name for --llm-url." name:"llm-model"`
	LLMAPIKey  string        `help:"API key for --llm-url." name:"llm-api-key"`
	LLMTimeout time.Duration `help:"Longest an answer may take." default:"60s" name:"llm-timeout"`

	ChunkTokens  int     `help:"Largest chunk, in cl100k_base tokens." default:"256"`
	ChunkOverlap int     `help:"Tokens repeated between windows of a long block." default:"32"`
	FreshK       int     `help:"Chunks each retriever (BM25, vector) returns every turn." default:"40" name:"fresh-k"`
	RRFK         int     `help:"Reciprocal rank fusion constant (ranks count from 1)." default:"60" name:"rrf-k"`
	BM25Weight   float64 `help:"Weight of the BM25 search of the question in fusion; 0 turns it off (then vector search must be on)." default:"1" name:"bm25-weight"`
	VectorWeight float64 `help:"Weight of the vector search of the question in fusion; 0 turns it off." default:"1"`

	CarryTau      float64  `help:"Re-score (0..1) a carried source needs to enter a turn; 0 lets every carried source in." default:"0.2"`
	CarryDecay    float64  `help:"Carry score multiplier (0 < d <= 1) for every turn a source is not used." default:"0.7"`
	CarryIdle     int      `help:"Turns without use (at least 1) after which a carried source is dropped." default:"3"`
	CarryCap      int      `help:"Most carried sources entering one turn; 0 carries none (pins included)." default:"10"`
	CarryWeight   float64  `help:"Weight of the carried list in fusion on drill-down turns; 0 turns it off." default:"0.01"`
	ReferWeight   float64  `help:"Weight of the carried list on turns about earlier sources (same-sources, and comparisons that point back: \"is it the same for floods?\"); 0 turns it off." default:"0.3"`
	ContextWeight float64  `help:"Weight of the context search (the question plus the telling words of the previous turn and of carried sources' titles), on follow-ups the conversation focus does not search; 0 turns it off." default:"0.5"`
	ContextTerms  int      `help:"Words the context search adds to the question." default:"3"`
	Rules         []string `help:"A rule every context bundle carries (after the sticky invariants); repeat for more." name:"rule"`
	ControlRatio  float64  `help:"Share (0..1) of new conversations given GENERAL budgets whatever their mode (the A/B control arm); 0 puts every conversation in treatment." default:"0"`
	ModeThreshold float64  `help:"Mode classifier confidence (0..1) under which the mode is GENERAL; 0 never falls back." default:"0.4"`
	Compact       string   `help:"What of the conversation a context bundle carries: full (every message), sliding-window (the latest --compact-window messages), goal-boundary (the current goal's messages, earlier goals as capsules) or token-budget (every message until --compact-budget tokens, then the oldest goals as capsules)." default:"goal-boundary" enum:"full,sliding-window,goal-boundary,token-budget"`
	CompactWindow int      `help:"Messages (at least 1) the sliding-window strategy keeps." default:"6"`
	CompactBudget int      `help:"Tokens (at least 1) of messages and capsules the token-budget strategy keeps before it compacts the oldest goals." default:"2000"`
	CapsuleTokens int      `help:"Largest capsule (summary of a finished goal), in tokens; 0 makes none, so finished goals stay verbatim." default:"400"`

	KG            bool    `help:"Use the mini knowledge graph: entities recorded at ingest, their neighbours' chunks fused when entities repeat across turns. Serving with it needs a graph (ingest --kg, or reindex --graph)." name:"kg" negatable:""`
	KGWeight      float64 `help:"Weight of the knowledge graph's list in fusion when --kg is on; 0 turns the list off." default:"0.5" name:"kg-weight"`
	AnaphoraBoost float64 `help:"Context search weight multiplier for questions that lean on the conversation (pronouns, very short); 0 turns the context search off for them." default:"2"`

	MaxPins int `help:"Most documents one conversation may have pinned (each is re-scored every turn); more is a 400." default:"32"`
	// HistoryWindow bounds what a turn reads of its conversation.
	HistoryWindow int `help:"Messages of a conversation each turn reads: the latest ones, with the current goal's first; earlier goals come as their capsules, and sticky invariants are kept however old. Every compaction strategy sees only these. 0 reads every message (a turn then costs more the longer the conversation)." default:"40"`

	Guardrails `embed:""`

	FocusWeight   float64 `help:"Weight of the focus search (a turn that leans on the conversation, searched among the documents of the titles it is about), times how much the turn leans; 0 turns the conversation focus off (neither tracked nor searched with)." default:"2"`
	FocusImplicit float64 `help:"How much (0..1) a turn that names nothing of its own and does not point back leans on the conversation's focus; 0 searches only turns that point back." default:"0.5"`
	FocusOwnInfo  float64 `help:"How much a turn may say by itself (the summed IDF of its words, a word only one chunk has counting 1) and keep the full weight of a focus search that adds a title's name to its words (a title of at most --fresh-k chunks); a turn that says more gets less, in proportion (twice as much: half), since the name's words would displace its own. A search within a title's chunks keeps its weight. 0 turns this off." default:"1"`
	FocusDecay    float64 `help:"Weight multiplier (0 < d <= 1) of a focus term for every turn since it was named." default:"0.7"`
	FocusSource   float64 `help:"Weight in the focus of the title or heading of a source a turn returned, kept as a subject (a name the user or the recorded reply says weighs 1); 0 leaves sources out." default:"0.5"`

	IngestAllow []string `help:"A network (CIDR, e.g. 10.20.0.0/16) URL ingest may fetch from although it is not public; repeat for more. By default only public internet addresses are fetched." name:"ingest-allow"`

	Listen string `help:"HTTP listen address." default:"127.0.0.1:8080"`
	// CORSOrigins is off by default: only pages served by ragd itself call the API.
	CORSOrigins []string `help:"A browser origin (https://chat.example.com) whose pages may call the API (CORS); repeat for more, * for any. None by default." name:"cors-origin"`
	LogLevel    string   `help:"Log level." default:"info" enum:"debug,info,warn,error"`
	LogFormat   string   `help:"Log format." default:"text" enum:"text,json"`
}

// Validate checks what the per-package validators cannot see, and runs them, so a bad setting
// is refused at start-up with the flag's name rather than failing later. Every error names the
// flag the user typed.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if c.MigrateDatabaseURL != "" && c.DatabaseURL == "" {
		errs = append(errs, errors.New("--migrate-database-url needs --database-url (the private cluster has its own owner and login)"))
	}
	for _, f := range []struct {
		flag string
		v    int
	}{{"--embed-batch", c.EmbedBatch}, {"--rerank-batch", c.RerankBatch}, {"--chunk-tokens", c.ChunkTokens}, {"--db-max-conns", c.DBMaxConns}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", f.flag, f.v))
		}
	}
	if c.EfSearch < 1 || c.EfSearch > 1000 {
		errs = append(errs, fmt.Errorf("--ef-search must be in 1..1000, got %d", c.EfSearch))
	}
	if c.BM25FrequentShare < 0 || c.BM25FrequentShare >= 1 {
		errs = append(errs, fmt.Errorf("--bm25-frequent-share must be in [0, 1) (0 leaves it to --bm25-frequent-chunks), got %g", c.BM25FrequentShare))
	}
	if c.BM25FrequentChunks < 0 {
		errs = append(errs, fmt.Errorf("--bm25-frequent-chunks must not be negative (0 turns it off), got %d", c.BM25FrequentChunks))
	}
	if c.BM25Candidates < 1 || c.BM25Candidates > 100000 {
		errs = append(errs, fmt.Errorf("--bm25-candidates must be in 1..100000, got %d", c.BM25Candidates))
	}
	if c.BM25OpenTenants < 0 {
		errs = append(errs, fmt.Errorf("--bm25-open-tenants must not be negative (0 is no bound), got %d", c.BM25OpenTenants))
	}
	if c.RerankWindow < 0 {
		errs = append(errs, fmt.Errorf("--rerank-window must not be negative (0 reads whole passages), got %d", c.RerankWindow))
	}
	if c.Threads < 0 {
		errs = append(errs, errors.New("--threads must not be negative (0 uses every core)"))
	}
	if c.ChunkOverlap < 0 {
		errs = append(errs, fmt.Errorf("--chunk-overlap must not be negative (0 is none), got %d", c.ChunkOverlap))
	}
	if c.ChunkTokens >= 1 && c.ChunkOverlap >= 0 {
		errs = append(errs, flagErrors(c.chunkOptions().Validate(), chunkFlags, "--chunk-*")...)
	}
	errs = append(errs, flagErrors(c.askConfig().Validate(), askFlags, "ask")...)
	errs = append(errs, c.validateGuardrails()...)
	if c.BM25Weight == 0 && (c.VectorWeight == 0 || c.EmbedModel == "") {
		errs = append(errs, errors.New("--bm25-weight 0 turns BM25 off, which needs vector search on (--embed-model, and --vector-weight above 0)"))
	}
	if err := c.serverConfig().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--cors-origin: %w", err))
	}
	if _, err := c.fetchConfig(); err != nil {
		errs = append(errs, err)
	}
	if c.LLMURL != "" {
		if c.LLMTimeout <= 0 {
			errs = append(errs, fmt.Errorf("--llm-timeout must be positive, got %s", c.LLMTimeout))
		} else if err := c.llmConfig().WithDefaults().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("--llm-*: %w", err))
		}
	}
	return errors.Join(errs...)
}

// askFlags names the flag behind each ask.Config field that a flag sets (askConfig is the other
// half of this table), so the pipeline's validation errors can name what the user typed.
var askFlags = map[string]string{
	"MaxPins": "--max-pins", "HistoryMessages": "--history-window",
	"FreshK": "--fresh-k", "RRFK": "--rrf-k", "BM25Weight": "--bm25-weight", "VectorWeight": "--vector-weight",
	"Carry.Tau": "--carry-tau", "Carry.Decay": "--carry-decay", "Carry.MaxIdle": "--carry-idle", "Carry.Cap": "--carry-cap",
	"CarryWeight": "--carry-weight", "ReferWeight": "--refer-weight", "ContextWeight": "--context-weight",
	"ContextTerms": "--context-terms", "Experiment.ControlRatio": "--control-ratio", "Experiment.Block": "--experiment-block", "Mode.Threshold": "--mode-threshold",
	"KGWeight": "--kg-weight", "AnaphoraBoost": "--anaphora-boost",
	"FocusWeight": "--focus-weight", "FocusImplicit": "--focus-implicit", "FocusOwnInfo": "--focus-own-info", "Focus.Decay": "--focus-decay", "Focus.Source": "--focus-source",
	"Compact.Strategy": "--compact", "Compact.WindowMessages": "--compact-window", "Compact.BudgetTokens": "--compact-budget",
	"Compact.CapsuleTokens": "--capsule-tokens",
}

// chunkFlags does the same for chunk.Options.
var chunkFlags = map[string]string{"max_tokens": "--chunk-tokens", "overlap": "--chunk-overlap"}

// flagErrors rewrites a package's field errors (*ragd.InputError) as errors naming the flags
// behind the fields. An error about a field no flag sets keeps the package's words after what.
func flagErrors(err error, flags map[string]string, what string) []error {
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok { // ask.Config.Validate joins a flat list
		list = j.Unwrap()
	}
	var out []error
	for _, e := range list {
		var ie *ragd.InputError
		if errors.As(e, &ie) {
			if flag, ok := flags[ie.Field]; ok {
				out = append(out, fmt.Errorf("%s %s", flag, ie.Reason))
				continue
			}
		}
		out = append(out, fmt.Errorf("%s: %w", what, e))
	}
	return out
}

func (c *Config) chunkOptions() chunk.Options {
	overlap := c.ChunkOverlap
	if overlap == 0 {
		overlap = -1 // chunk.Options reads 0 as "default"; the flag's 0 means none
	}
	return chunk.Options{MaxTokens: c.ChunkTokens, Overlap: overlap}
}

// askConfig is the pipeline's configuration: the product defaults with every flag's value,
// zero included, set over them.
func (c *Config) askConfig() ask.Config {
	a := ask.DefaultConfig()
	a.FreshK, a.RRFK = c.FreshK, c.RRFK
	a.BM25Weight, a.VectorWeight = c.BM25Weight, c.VectorWeight
	a.Carry = carry.Config{Tau: c.CarryTau, Decay: c.CarryDecay, MaxIdle: c.CarryIdle, Cap: c.CarryCap}
	a.CarryWeight, a.ReferWeight = c.CarryWeight, c.ReferWeight
	a.ContextWeight, a.ContextTerms, a.AnaphoraBoost = c.ContextWeight, c.ContextTerms, c.AnaphoraBoost
	a.Rules = c.Rules
	a.MaxPins, a.HistoryMessages = c.MaxPins, c.HistoryWindow
	a.Experiment = c.experimentConfig()
	a.Mode.Threshold = c.ModeThreshold
	a.Graph, a.KGWeight = c.KG, c.KGWeight
	a.FocusWeight, a.FocusImplicit, a.FocusOwnInfo = c.FocusWeight, c.FocusImplicit, c.FocusOwnInfo
	a.Focus.Decay, a.Focus.Source = c.FocusDecay, c.FocusSource
	a.Compact = compact.Config{Strategy: c.Compact, WindowMessages: c.CompactWindow, BudgetTokens: c.CompactBudget, CapsuleTokens: c.CapsuleTokens}
	return a
}

func (c *Config) ingestConfig(logger *slog.Logger) ingest.Config {
	fc, _ := c.fetchConfig() // Validate reported any error
	return ingest.Config{Chunk: c.chunkOptions(), Graph: c.KG, Fetch: fc, Logger: logger}
}

func (c *Config) fetchConfig() (ingest.FetchConfig, error) {
	var fc ingest.FetchConfig
	for _, s := range c.IngestAllow {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return fc, fmt.Errorf("--ingest-allow %q: want a network such as 10.20.0.0/16: %w", s, err)
		}
		fc.Allow = append(fc.Allow, p.Masked())
	}
	return fc, nil
}

func (c *Config) modelConfig(dir string, batch int, logger *slog.Logger) encoder.Config {
	threads := c.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	return encoder.Config{Dir: dir, Runtime: encoder.Runtime(c.Runtime), ORTLibrary: c.ORTLibrary,
		BatchSize: batch, Threads: threads, Logger: logger}
}

func (c *Config) serverConfig() server.Config {
	fc, _ := c.fetchConfig() // Validate reported any error
	return server.Config{CORSOrigins: c.CORSOrigins, Fetcher: fc.Client(), MaxPins: c.MaxPins}
}

func (c *Config) llmConfig() llm.Config {
	return llm.Config{BaseURL: c.LLMURL, Model: c.LLMModel, APIKey: c.LLMAPIKey, Timeout: c.LLMTimeout}
}

func (c *Config) indexOptions() index.Options {
	return index.Options{FrequentChunks: c.BM25FrequentChunks, FrequentShare: c.BM25FrequentShare, Candidates: c.BM25Candidates,
		MaxOpen: c.BM25OpenTenants}
}

func (c *Config) clusterDir() string { return filepath.Join(c.DataDir, "postgres") }
func (c *Config) indexDir() string {
	if c.IndexDir != "" {
		return c.IndexDir
	}
	return filepath.Join(c.DataDir, "index")
}

// envars gives every flag without an env tag the variable prefix_NAME, its name upper-cased with
// "-" as "_": RAGD_BM25_WEIGHT for --bm25-weight. kong's DefaultEnvars splits a name's digits off
// (RAGD_BM_25_WEIGHT), so a user who spelled --bm25-weight's variable the way every other flag's
// is spelled set nothing; that spelling is still read, after the documented one.
func envars(prefix string) kong.Option {
	return kong.PostBuild(func(k *kong.Kong) error {
		return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
			if f, ok := n.(*kong.Flag); ok && f.Name != "help" {
				switch {
				case len(f.Envs) == 1 && f.Envs[0] == "-":
					f.Envs, f.Tag.Envs = nil, nil
				case len(f.Envs) == 0:
					name := prefix + "_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
					f.Envs = []string{name}
					if split := prefix + "_" + kongSpelling(f.Name); split != name {
						f.Envs = append(f.Envs, split)
					}
					f.Tag.Envs = f.Envs
				}
			}
			return next(nil)
		})
	})
}

// kongSpelling is the variable name kong's DefaultEnvars gives a flag: its name upper-cased, "-"
// as "_", and "_" between letters and digits.
func kongSpelling(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsDigit(r) != unicode.IsDigit(rune(name[i-1])) && r != '-' && name[i-1] != '-' {
			b.WriteByte('_')
		}
		if r == '-' {
			r = '_'
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// parseArgs parses args. An error that names a flag whose value came from its variable (the flag
// is not in args) says so, as kong's own errors do, so that it names what the user typed:
// "--fresh-k (from envar RAGD_FRESH_K) must be in 1..1000, got 0".
func parseArgs(p *kong.Kong, args []string) (*kong.Context, error) {
	args = joinNegativeValues(p.Model, args)
	kctx, err := p.Parse(args)
	if err == nil || strings.Contains(err.Error(), "envar") {
		return kctx, err
	}
	msg := err.Error()
	_ = kong.Visit(p.Model, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok && !given(args, f.Name) {
			for _, env := range f.Envs {
				if _, set := os.LookupEnv(env); set {
					re := regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `([^a-z0-9-]|$)`)
					msg = re.ReplaceAllString(msg, "--"+f.Name+" (from envar "+env+")$1")
					break
				}
			}
		}
		return next(nil)
	})
	if msg == err.Error() {
		return kctx, err
	}
	return kctx, envarError{msg, err}
}

// negative is an argument that can only be a negative number or duration (-1, -0.5, -1s): ragd
// has no short flag that is a digit.
var negative = regexp.MustCompile(`^-\.?[0-9]`)

// joinNegativeValues writes "--flag -1" as "--flag=-1" for every flag that takes a value. Kong
// reads a separate "-1" as a short flag and fails with "expected float value but got "-1"
// (short flag)"; joined, the value reaches the flag's own check, which names the flag and its
// range. Arguments after "--" are left alone.
func joinNegativeValues(app *kong.Application, args []string) []string {
	takesValue := map[string]bool{}
	_ = kong.Visit(app, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok && !f.IsBool() && !f.IsCounter() {
			for _, name := range append([]string{f.Name}, f.Aliases...) {
				takesValue["--"+name] = true
			}
		}
		return next(nil)
	})
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if takesValue[args[i]] && i+1 < len(args) && negative.MatchString(args[i+1]) {
			out = append(out, args[i]+"="+args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// envarError is a parse error whose text names the variables behind its flags; it unwraps to
// kong's error, which decides how it is reported (with the usage).
type envarError struct {
	msg string
	err error
}

func (e envarError) Error() string { return e.msg }
func (e envarError) Unwrap() error { return e.err }

// flagNamed is how an error after parsing names a flag: as typed, or with the variable its value
// came from ("--embed-model (from envar RAGD_EMBED_MODEL)"), as parseArgs has parse errors do.
func flagNamed(name string) string {
	env := "RAGD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if _, set := os.LookupEnv(env); set && !given(os.Args[1:], name) {
		return "--" + name + " (from envar " + env + ")"
	}
	return "--" + name
}

// given reports whether args set flag name themselves (--name, --name=V or --no-name).
func given(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") || a == "--no-"+name {
			return true
		}
	}
	return false
}

// toolVariables are the RAGD_ variables ragd's own scripts and tests read and ragd does not. They
// are set around ragd (scripts/test.sh exports RAGD_TEST_ARTIFACTS, then runs `ragd db start`;
// a test runs ragd with RAGD_TEST_RUN_MAIN), so they are no misspellings and get no warning;
// every RAGD_TEST_ name is the tests'. TestRepositoryVariablesAreKnown keeps this list in step
// with the repository's scripts and tests.
var toolVariables = map[string]bool{
	"RAGD_SHARED_DIR": true, "RAGD_CHROMIUM": true, "RAGD_REPLICA_LAG_JSON": true, // tests
	"RAGD_FUZZTIME": true, "RAGD_DEMO_DATA": true, "RAGD_DEMO_PORT": true, // scripts/test.sh, demo.sh
	"RAGD_SETUP_FORCE": true, "RAGD_GO_H1": true, "RAGD_ORT_VERSION": true, "RAGD_ORT_SHA1": true, // scripts/setup.sh
	"RAGD_FRESH_CACHE": true, "RAGD_FRESH_MIRROR": true, // scripts/fresh-machine.sh
	"RAGD_DB_PASSWORD": true, "RAGD_LOGIN_PASSWORD": true, // compose.yaml
}

// unknownEnvars returns a warning for each variable of environ under prefix ("RAGD") that no flag
// of app reads (the variables envars gave them, of every subcommand) and ragd's own tooling does
// not set, naming the closest variable a flag reads when one is close: a misspelt variable is
// otherwise ignored without a word.
func unknownEnvars(app *kong.Application, prefix string, environ []string) []string {
	known := map[string]bool{}
	_ = kong.Visit(app, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok {
			for _, env := range f.Envs {
				known[env] = true
			}
		}
		return next(nil)
	})
	names := slices.Sorted(maps.Keys(known))
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, prefix+"_") || known[name] || toolVariables[name] || strings.HasPrefix(name, prefix+"_TEST_") {
			continue
		}
		best, dist := "", 0
		for _, k := range names {
			if d := levenshtein.ComputeDistance(name, k); best == "" || d < dist {
				best, dist = k, d
			}
		}
		// Close: at most a third of the name's own part differs (two edits for a short one).
		if best != "" && dist <= max(2, (len(name)-len(prefix)-1)/3) {
			out = append(out, fmt.Sprintf("%s is not a ragd variable, ignored; did you mean %s?", name, best))
		} else {
			out = append(out, fmt.Sprintf("%s is not a ragd variable, ignored (`ragd --help` names each flag's variable)", name))
		}
	}
	return out
}
