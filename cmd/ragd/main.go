// Command ragd is the retrieval server for chat applications: `ragd serve` answers /v1/ask,
// `ragd ingest` loads documents, and the other subcommands migrate, rebuild, verify and evaluate.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/ragd/ragd/redact"
)

// CLI is the command line: the shared Config plus one struct per subcommand.
type CLI struct {
	Config `embed:""`

	Serve   serveCmd   `cmd:"" help:"Run the HTTP server."`
	Ask     askCmd     `cmd:"" help:"Ask a running server a question and print the answer (a small client)."`
	Ingest  ingestCmd  `cmd:"" help:"Ingest files, directories, JSONL corpora or http(s) URLs."`
	Migrate migrateCmd `cmd:"" help:"Apply pending database migrations."`
	Reindex reindexCmd `cmd:"" help:"Rebuild the BM25 index from PostgreSQL; --embeddings fills missing vectors."`
	DB      dbCmd      `cmd:"" name:"db" help:"Run the private PostgreSQL by hand: start (detached), stop, status."`
	Keys    keysCmd    `cmd:"" help:"Create, list and revoke API keys."`
	Models  modelsCmd  `cmd:"" help:"Inspect model directories."`
	Eval    evalCmd    `cmd:"" help:"Measure retrieval quality and latency on public datasets."`
	Version versionCmd `cmd:"" help:"Print the version."`
}

func main() {
	var cli CLI
	parser := kong.Must(&cli,
		kong.Name("ragd"),
		kong.Description("Retrieval server for chat applications: hybrid search, conversation carry-over, auditable citations."),
		envars("RAGD"),
		// The short usage: the full one is 300 lines and scrolls the error away.
		kong.ShortUsageOnError(),
		kong.Help(commandHelp),
	)
	kctx, err := parseArgs(parser, os.Args[1:])
	parser.FatalIfErrorf(err)
	logger := newLogger(cli.LogLevel, cli.LogFormat, redact.Secrets(cli.LLMAPIKey, cli.LLMURL, cli.DatabaseURL, cli.MigrateDatabaseURL, cli.Ask.Key)...)
	slog.SetDefault(logger)
	for _, w := range unknownEnvars(parser.Model, "RAGD", os.Environ()) {
		logger.Warn(w)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := newApp(&cli.Config, logger)
	kctx.BindTo(ctx, (*context.Context)(nil))
	err = kctx.Run(a)
	a.close()
	if err != nil {
		logger.Error("ragd failed", slog.String("command", kctx.Command()), slog.String("error", err.Error()))
		os.Exit(1)
	}
}

// sharedFlagReader is a command that reads only a few of the shared flags (Config): its help
// lists those, and not the server's two hundred it would ignore.
type sharedFlagReader interface{ sharedFlags() []string }

// commandHelp is kong's help, with the shared flags a sharedFlagReader does not read hidden.
func commandHelp(o kong.HelpOptions, ctx *kong.Context) error {
	sel := ctx.Selected()
	if sel == nil || !sel.Target.IsValid() {
		return kong.DefaultHelpPrinter(o, ctx)
	}
	r, ok := sel.Target.Interface().(sharedFlagReader)
	if !ok {
		return kong.DefaultHelpPrinter(o, ctx)
	}
	keep := map[string]bool{"help": true}
	for _, name := range r.sharedFlags() {
		keep[name] = true
	}
	var hidden []*kong.Flag
	for _, f := range ctx.Model.Flags {
		if !f.Hidden && !keep[f.Name] {
			f.Hidden = true
			hidden = append(hidden, f)
		}
	}
	defer func() { // the model outlives this help (tests parse again)
		for _, f := range hidden {
			f.Hidden = false
		}
	}()
	return kong.DefaultHelpPrinter(o, ctx)
}

// newLogger writes to stderr through a redacting handler: no log line carries a URL's password,
// an Authorization value or one of secrets, whatever an upstream's error echoed.
func newLogger(level, format string, secrets ...string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // kong's enum already checked it
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, opts)
	if format == "json" {
		h = slog.NewJSONHandler(os.Stderr, opts)
	}
	return slog.New(redact.NewHandler(h, secrets...))
}

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println("ragd", version())
	return nil
}

// version is the module version when built from a tagged module, else the VCS revision.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
			v = s.Value
			if len(v) > 12 {
				v = v[:12]
			}
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "-dirty"
		}
	}
	return v
}
