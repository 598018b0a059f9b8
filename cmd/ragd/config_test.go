package main

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/index"
	"github.com/ragd/ragd/internal/modeltest"
	"github.com/ragd/ragd/mode"
)

func parse(t *testing.T, env map[string]string, args ...string) (*CLI, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var cli CLI
	p, err := kong.New(&cli, envars("RAGD"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	_, err = parseArgs(p, args)
	return &cli, err
}

// Bad settings fail at start-up, naming the flag, before anything is opened.
func TestConfigRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"version", "--runtime", "tpu"}, nil, `--runtime must be one of "auto","onnxruntime","go" but got "tpu"`},
		{[]string{"version", "--chunk-tokens", "8"}, nil, "--chunk-tokens must be at least 32, got 8"},
		{[]string{"version", "--chunk-tokens", "0"}, nil, "--chunk-tokens must be at least 1, got 0"},
		{[]string{"version", "--chunk-overlap", "200"}, nil, "--chunk-overlap must be less than half of max_tokens"},
		{[]string{"version", "--chunk-overlap=-1"}, nil, "--chunk-overlap must not be negative"},
		{[]string{"version", "--fresh-k", "0"}, nil, "--fresh-k must be in 1..1000, got 0"},
		{[]string{"version", "--fresh-k", "5000"}, nil, "--fresh-k must be in 1..1000, got 5000"},
		{[]string{"version", "--embed-batch", "0"}, nil, "--embed-batch must be at least 1, got 0"},
		{[]string{"version", "--ef-search", "0"}, nil, "--ef-search must be in 1..1000, got 0"},
		{[]string{"version", "--ef-search", "1001"}, nil, "--ef-search must be in 1..1000, got 1001"},
		{[]string{"version", "--bm25-frequent-share", "1"}, nil, "--bm25-frequent-share must be in [0, 1) (0 leaves it to --bm25-frequent-chunks), got 1"},
		{[]string{"version", "--bm25-frequent-share=-0.1"}, nil, "--bm25-frequent-share must be in [0, 1) (0 leaves it to --bm25-frequent-chunks), got -0.1"},
		{[]string{"version", "--bm25-frequent-chunks=-1"}, nil, "--bm25-frequent-chunks must not be negative (0 turns it off), got -1"},
		{[]string{"version", "--bm25-candidates", "0"}, nil, "--bm25-candidates must be in 1..100000, got 0"},
		{[]string{"version", "--bm25-open-tenants=-1"}, nil, "--bm25-open-tenants must not be negative (0 is no bound), got -1"},
		{[]string{"version", "--rerank-batch=-2"}, nil, "--rerank-batch must be at least 1, got -2"},
		{[]string{"version", "--rerank-window=-1"}, nil, "--rerank-window must not be negative (0 reads whole passages), got -1"},
		{[]string{"version"}, map[string]string{"RAGD_RRF_K": "-1"}, "--rrf-k (from envar RAGD_RRF_K) must be at least 1, got -1"},
		// The flag given names itself; its variable is then not what the user typed.
		{[]string{"version", "--rrf-k=-1"}, map[string]string{"RAGD_RRF_K": "5"}, "--rrf-k must be at least 1, got -1"},
		{[]string{"version", "--carry-tau", "1.5"}, nil, "--carry-tau must be in 0..1, got 1.5"},
		{[]string{"version", "--carry-decay", "2"}, nil, "--carry-decay must be in (0, 1], got 2"},
		{[]string{"version", "--carry-decay", "0"}, nil, "--carry-decay must be in (0, 1], got 0"},
		{[]string{"version", "--carry-idle", "0"}, nil, "--carry-idle must be at least 1, got 0"},
		{[]string{"version", "--carry-cap=-1"}, nil, "--carry-cap must not be negative, got -1"},
		{[]string{"version", "--carry-weight=-0.1"}, nil, "--carry-weight must be a number >= 0"},
		{[]string{"version", "--refer-weight=-1"}, nil, "--refer-weight must be a number >= 0"},
		{[]string{"version", "--context-weight=-1"}, nil, "--context-weight must be a number >= 0"},
		{[]string{"version", "--context-terms=-1"}, nil, "--context-terms must not be negative"},
		{[]string{"version", "--vector-weight=-1"}, nil, "--vector-weight must be a number >= 0"},
		{[]string{"version", "--kg-weight=-1"}, nil, "--kg-weight must be a number >= 0"},
		{[]string{"version", "--anaphora-boost=-1"}, nil, "--anaphora-boost must be a number >= 0"},
		{[]string{"version", "--focus-weight=-1"}, nil, "--focus-weight must be a number >= 0"},
		{[]string{"version", "--focus-implicit=2"}, nil, "--focus-implicit must be in 0..1"},
		{[]string{"version", "--focus-own-info=-1"}, nil, "--focus-own-info must be a number >= 0 (0 turns it off), got -1"},
		{[]string{"version", "--control-ratio", "1.5"}, nil, "--control-ratio must be in 0..1, got 1.5"},
		{[]string{"version", "--mode-threshold", "2"}, nil, "--mode-threshold must be in 0..1, got 2"},
		{[]string{"version", "--bm25-weight", "0"}, nil, "--bm25-weight 0 turns BM25 off, which needs vector search on"},
		{[]string{"version", "--bm25-weight", "0", "--embed-model", "m", "--vector-weight", "0"}, nil, "--bm25-weight 0 turns BM25 off"},
		{[]string{"version", "--drift-window", "0s"}, nil, "--drift-window must be positive"},
		{[]string{"version", "--drift-threshold=-1"}, nil, "--drift-threshold must be >= 0"},
		{[]string{"version", "--drift-hold=-1s"}, nil, "--drift-hold must not be negative"},
		{[]string{"version", "--drift-min-turns", "0"}, nil, "--drift-min-turns must be at least 1"},
		{[]string{"version", "--drift-baseline", "TASK:1"}, nil, "--drift-baseline: "},
		{[]string{"version", "--drift-baseline", "CHAT=1"}, nil, `--drift-baseline: unknown mode "CHAT"`},
		{[]string{"version", "--drift-baseline", "TASK=1e308,GENERAL=1e308"}, nil, "--drift-baseline: the shares add up to more than a float64 holds"},
		{[]string{"version", "--drift-baseline", "TASK=often"}, nil, `--drift-baseline: "TASK=often": strconv.ParseFloat: parsing "often": invalid syntax; want observed, or MODE=share pairs such as TASK=0.3,LEARNING=0.4,GENERAL=0.3 (modes: TASK, EXPLORATION, DEBUGGING, LEARNING, GENERAL)`},
		{[]string{"version"}, map[string]string{"RAGD_DRIFT_BASELINE": "CHAT=1"}, `--drift-baseline (from envar RAGD_DRIFT_BASELINE): unknown mode "CHAT"; want observed, or MODE=share pairs`},
		{[]string{"version", "--error-factor", "0.5"}, nil, "--error-factor must be at least 1"},
		{[]string{"version", "--error-baseline", "2"}, nil, "--error-baseline must be in 0..1"},
		{[]string{"version", "--error-baseline", "often"}, nil, "--error-baseline: \"often\" is neither observed nor a number"},
		{[]string{"version", "--error-min-feedback", "0"}, nil, "--error-min-feedback must be at least 1"},
		{[]string{"version", "--experiment", "abc"}, nil, "--experiment must be one of"},
		{[]string{"version", "--experiment-block", "0"}, nil, "--experiment-block must be at least 1"},
		{[]string{"version", "--rollback-factor", "0.5"}, nil, "--rollback-factor must be at least 1"},
		{[]string{"version", "--llm-url", "localhost:11434"}, nil, "--llm-*"},
		{[]string{"version", "--llm-url", "http://localhost:11434/v1", "--llm-model", "m", "--llm-timeout", "0s"}, nil, "--llm-timeout must be positive"},
		{[]string{"version", "--compact", "rolling"}, nil, "--compact must be one of"},
		{[]string{"version", "--compact-window", "0"}, nil, "--compact-window must be at least 1 message, got 0"},
		{[]string{"version", "--history-window=-1"}, nil, "--history-window must be 0 (every message) or more, got -1"},
		{[]string{"version", "--compact-budget", "0"}, nil, "--compact-budget must be at least 1 token, got 0"},
		{[]string{"version", "--capsule-tokens=-1"}, nil, "--capsule-tokens must not be negative (0 makes no capsules), got -1"},
		{[]string{"version", "--log-level", "loud"}, nil, "--log-level must be one of"},
		{[]string{"version"}, map[string]string{"RAGD_FRESH_K": "many"}, "--fresh-k"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := parse(t, tc.env, tc.args...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Every ask.Config field a flag sets has a name in askFlags, and the name is that flag: an
// error about the field names what the user typed.
func TestConfigErrorsNameTheFlag(t *testing.T) {
	for field, flag := range askFlags {
		t.Run(flag, func(t *testing.T) {
			_, err := parse(t, nil, "version", flag+"=-7")
			require.Error(t, err, "a negative %s is refused", flag)
			require.True(t, strings.HasPrefix(err.Error(), flag+" "), "the error of %s (%s) starts with the flag: %v", field, flag, err)
		})
	}
}

// A negative number given as a separate argument ("--carry-weight -1", as most users type it)
// reaches the flag's own check, which names the flag and its range, rather than kong's "-1
// (short flag)"; a negative value a flag allows is taken.
func TestConfigNegativeValueAsSeparateArgument(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "--carry-weight", "-1"}, "--carry-weight must be a number >= 0 (0 turns it off), got -1"},
		{[]string{"version", "--carry-decay", "-1"}, "--carry-decay must be in (0, 1], got -1"},
		{[]string{"version", "--bm25-frequent-share", "-.5"}, "--bm25-frequent-share must be in [0, 1)"},
		{[]string{"version", "--drift-hold", "-1s"}, "--drift-hold must not be negative"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := parse(t, nil, tc.args...)
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "the error names the flag and its range: %v", err)
		})
	}
	for _, flag := range askFlags {
		t.Run(flag, func(t *testing.T) {
			_, err := parse(t, nil, "version", flag, "-7")
			require.Error(t, err, "a negative %s is refused", flag)
			require.True(t, strings.HasPrefix(err.Error(), flag+" "), "the error starts with the flag: %v", err)
		})
	}
	cli, err := parse(t, nil, "serve", "--upload-async-bytes", "-1", "--rrf-k", "7")
	require.NoError(t, err, "-1 is --upload-async-bytes' documented \"never\"")
	require.Equal(t, int64(-1), cli.Serve.UploadAsyncBytes)
	require.Equal(t, 7, cli.RRFK, "the flags after the joined pair are read")
}

// The flags' defaults are the pipeline's product defaults: with no flag, the Config ragd runs
// with is ask.DefaultConfig().
func TestConfigDefaultsAreTheProductDefaults(t *testing.T) {
	cli, err := parse(t, nil, "version")
	require.NoError(t, err)
	require.Equal(t, ask.DefaultConfig(), cli.askConfig())
	require.False(t, cli.KG, "the knowledge graph is off by default")
}

// Each flag sets its field, 0 and "off" included: 0 is a value, never "use the default".
func TestConfigFlagsToConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want func(*ask.Config)
	}{
		{[]string{"--fresh-k", "20"}, func(c *ask.Config) { c.FreshK = 20 }},
		{[]string{"--rrf-k", "1"}, func(c *ask.Config) { c.RRFK = 1 }},
		{[]string{"--bm25-weight", "0.5"}, func(c *ask.Config) { c.BM25Weight = 0.5 }},
		{[]string{"--bm25-weight", "0", "--embed-model", "m"}, func(c *ask.Config) { c.BM25Weight = 0 }},
		{[]string{"--vector-weight", "0"}, func(c *ask.Config) { c.VectorWeight = 0 }},
		{[]string{"--carry-tau", "0"}, func(c *ask.Config) { c.Carry.Tau = 0 }},
		{[]string{"--carry-decay", "1"}, func(c *ask.Config) { c.Carry.Decay = 1 }},
		{[]string{"--carry-idle", "1"}, func(c *ask.Config) { c.Carry.MaxIdle = 1 }},
		{[]string{"--carry-cap", "0"}, func(c *ask.Config) { c.Carry.Cap = 0 }},
		{[]string{"--carry-weight", "0"}, func(c *ask.Config) { c.CarryWeight = 0 }},
		{[]string{"--refer-weight", "0"}, func(c *ask.Config) { c.ReferWeight = 0 }},
		{[]string{"--context-weight", "0"}, func(c *ask.Config) { c.ContextWeight = 0 }},
		{[]string{"--context-terms", "0"}, func(c *ask.Config) { c.ContextTerms = 0 }},
		{[]string{"--anaphora-boost", "0"}, func(c *ask.Config) { c.AnaphoraBoost = 0 }},
		{[]string{"--kg-weight", "0"}, func(c *ask.Config) { c.KGWeight = 0 }},
		{[]string{"--control-ratio", "0.5"}, func(c *ask.Config) { c.Experiment.ControlRatio = 0.5 }},
		{[]string{"--experiment", "off"}, func(c *ask.Config) { c.Experiment.Design = experiment.Off }},
		{[]string{"--experiment", "recent-window", "--experiment-block", "8"}, func(c *ask.Config) {
			c.Experiment.Design, c.Experiment.Block = experiment.RecentWindow, 8
		}},
		{[]string{"--experiment-budget", "matched"}, func(c *ask.Config) { c.Experiment.Budget = experiment.Matched }},
		{[]string{"--focus-weight", "0"}, func(c *ask.Config) { c.FocusWeight = 0 }},
		{[]string{"--history-window", "0"}, func(c *ask.Config) { c.HistoryMessages = 0 }},
		{[]string{"--history-window", "6"}, func(c *ask.Config) { c.HistoryMessages = 6 }},
		{[]string{"--focus-implicit", "0"}, func(c *ask.Config) { c.FocusImplicit = 0 }},
		{[]string{"--focus-own-info", "0"}, func(c *ask.Config) { c.FocusOwnInfo = 0 }},
		{[]string{"--focus-own-info", "2.5"}, func(c *ask.Config) { c.FocusOwnInfo = 2.5 }},
		{[]string{"--focus-decay", "1"}, func(c *ask.Config) { c.Focus.Decay = 1 }},
		{[]string{"--focus-source", "0"}, func(c *ask.Config) { c.Focus.Source = 0 }},
		{[]string{"--mode-threshold", "0"}, func(c *ask.Config) { c.Mode.Threshold = 0 }},
		{[]string{"--rule", "cite sources", "--rule", "be brief"}, func(c *ask.Config) { c.Rules = []string{"cite sources", "be brief"} }},
		{[]string{"--compact", "full"}, func(c *ask.Config) { c.Compact.Strategy = "full" }},
		{[]string{"--compact", "sliding-window", "--compact-window", "1"}, func(c *ask.Config) {
			c.Compact.Strategy, c.Compact.WindowMessages = "sliding-window", 1
		}},
		{[]string{"--compact", "token-budget", "--compact-budget", "1"}, func(c *ask.Config) {
			c.Compact.Strategy, c.Compact.BudgetTokens = "token-budget", 1
		}},
		{[]string{"--capsule-tokens", "0"}, func(c *ask.Config) { c.Compact.CapsuleTokens = 0 }},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cli, err := parse(t, nil, append([]string{"version"}, tc.args...)...)
			require.NoError(t, err)
			want := ask.DefaultConfig()
			tc.want(&want)
			require.Equal(t, want, cli.askConfig())
		})
	}
}

func TestConfigOtherFlags(t *testing.T) {
	cli, err := parse(t, map[string]string{"RAGD_DATABASE_URL": "postgres://db/ragd", "RAGD_FRESH_K": "20", "RAGD_KG": "true"},
		"version", "--rrf-k", "30", "--chunk-overlap", "0", "--threads", "0")
	require.NoError(t, err)
	require.Equal(t, "postgres://db/ragd", cli.DatabaseURL, "RAGD_* variables set flags")
	require.Equal(t, 20, cli.askConfig().FreshK)
	require.Equal(t, 30, cli.askConfig().RRFK)
	require.True(t, cli.KG)
	require.Equal(t, 256, cli.ChunkTokens, "defaults are the product's numbers")
	require.Equal(t, 0, cli.chunkOptions().WithDefaults().Overlap, "--chunk-overlap 0 is no overlap, not the default 32")
	require.Equal(t, "auto", cli.Runtime)
	require.Equal(t, 100, cli.EfSearch, "pgvector's ef_search: the store's default")
	require.Zero(t, cli.BM25FrequentShare, "no share unless asked")
	require.Equal(t, index.Options{FrequentChunks: 20000, Candidates: 2000, MaxOpen: 256}, cli.indexOptions(), "a corpus of up to 20k chunks is searched exactly")

	require.Equal(t, 0, cli.RerankWindow, "whole passages unless asked")

	cli, err = parse(t, map[string]string{"RAGD_KG": "true"}, "version", "--no-kg")
	require.NoError(t, err)
	require.False(t, cli.KG, "--no-kg turns the graph off whatever the environment says")
}

// A flag's variable is RAGD_ and its name, "-" as "_", for every flag without a variable of its
// own (env tag), those with digits too; kong's own spelling of those (RAGD_BM_25_...) is still
// read, after it.
func TestEveryFlagsVariableIsItsName(t *testing.T) {
	var cli CLI
	p, err := kong.New(&cli, envars("RAGD"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	n := 0
	require.NoError(t, kong.Visit(p.Model, func(v kong.Visitable, next kong.Next) error {
		if f, ok := v.(*kong.Flag); ok && f.Name != "help" && !f.Tag.Has("env") {
			require.Equal(t, "RAGD_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), f.Envs[0], "--%s", f.Name)
			n++
		}
		return next(nil)
	}))
	require.Greater(t, n, 50, "every flag was visited")

	for _, name := range []string{"RAGD_BM25_CANDIDATES", "RAGD_BM_25_CANDIDATES"} {
		cli, err := parse(t, map[string]string{name: "300"}, "version")
		require.NoError(t, err)
		require.Equal(t, 300, cli.BM25Candidates, name)
	}
	_, err = parse(t, map[string]string{"RAGD_BM25_OPEN_TENANTS": "-1"}, "version")
	require.ErrorContains(t, err, "--bm25-open-tenants (from envar RAGD_BM25_OPEN_TENANTS) must not be negative")
}

// --metrics-listen means what its help says: empty leaves /metrics to the API's listener, off
// serves it nowhere, an address is a listener of its own; anything else is refused, naming it.
func TestMetricsListenFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		addr string
		off  bool
		err  string
	}{
		{args: nil},
		{args: []string{"--metrics-listen", ""}},
		{args: []string{"--metrics-listen", "off"}, off: true},
		{args: []string{"--metrics-listen", "0.0.0.0:9090"}, addr: "0.0.0.0:9090"},
		{args: []string{"--metrics-listen", "127.0.0.1:0"}, addr: "127.0.0.1:0"},
		{env: map[string]string{"RAGD_METRICS_LISTEN": "off"}, off: true},
		{env: map[string]string{"RAGD_METRICS_LISTEN": "[::1]:9090"}, addr: "[::1]:9090"},
		{args: []string{"--metrics-listen", "0"}, err: `--metrics-listen "0": want HOST:PORT (like 127.0.0.1:9090), or off to serve /metrics nowhere`},
		{args: []string{"--metrics-listen", "none"}, err: `--metrics-listen "none": want HOST:PORT`},
		{args: []string{"--metrics-listen", "127.0.0.1:8080"}, err: "--metrics-listen 127.0.0.1:8080 is the API's address (--listen 127.0.0.1:8080)"},
		{args: []string{"--metrics-listen", "0.0.0.0:8080"}, err: "--metrics-listen 0.0.0.0:8080 is the API's address"},
		{args: []string{"--listen", ":9090", "--metrics-listen", "127.0.0.1:9090"}, err: "--metrics-listen 127.0.0.1:9090 is the API's address (--listen :9090)"},
		{args: []string{"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}, addr: "127.0.0.1:0"},
	} {
		name := strings.Join(tc.args, " ")
		for k, v := range tc.env {
			name += k + "=" + v
		}
		t.Run(name, func(t *testing.T) {
			cli, err := parse(t, tc.env, append([]string{"serve"}, tc.args...)...)
			require.NoError(t, err)
			addr, off, err := cli.Serve.metricsAddr(cli.Listen)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.addr, addr)
			require.Equal(t, tc.off, off)
		})
	}
}

func TestPprofListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:0"} {
		require.NoError(t, loopback(ok), ok)
	}
	for _, bad := range []string{"0.0.0.0:6060", ":6060", "10.0.0.1:6060", "example.com:6060", "6060"} {
		require.Error(t, loopback(bad), bad)
	}
}

// A saved drift baseline whose shares add up past a float64 (PUT once accepted it) is left out
// with a warning, so that serve starts and the tenant's drift is a number; the others are read.
func TestSavedBaselineThatIsNoDistributionIsIgnored(t *testing.T) {
	bad, good := uuid.New(), uuid.New()
	var logs bytes.Buffer
	got, err := savedBaselines(map[uuid.UUID][]byte{
		bad:  []byte(`{"distribution":{"TASK":1e308,"GENERAL":1e308},"source":"set"}`),
		good: []byte(`{"distribution":{"TASK":0.5,"GENERAL":0.5},"source":"set"}`),
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.NotContains(t, got, bad.String())
	require.Contains(t, got, good.String())
	require.Contains(t, logs.String(), "saved drift baseline ignored")
	require.Contains(t, logs.String(), bad.String())

	cfg := mode.DefaultDriftConfig()
	cfg.Baselines, cfg.MinObservations, cfg.Reference = got, 1, time.Nanosecond
	d, err := mode.NewDrift(cfg)
	require.NoError(t, err, "serve starts")
	for range 3 {
		kl, _, _ := d.Observe(bad.String(), mode.Task)
		require.False(t, math.IsNaN(kl))
	}
	b, ok := d.Baseline(bad.String())
	require.True(t, ok, "the tenant observed a new baseline")
	require.Equal(t, mode.BaselineObserved, b.Source)

	_, err = savedBaselines(map[uuid.UUID][]byte{bad: []byte(`{`)}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.Error(t, err, "a row that is not JSON is still an error")
}

// The guardrail flags set the monitors' settings, 0 included.
func TestGuardrailFlags(t *testing.T) {
	cli, err := parse(t, nil, "version")
	require.NoError(t, err)
	d, err := cli.driftConfig(nil, nil)
	require.NoError(t, err)
	want := mode.DefaultDriftConfig()
	require.Equal(t, [5]any{want.Window, want.Threshold, want.Hold, want.Reference, want.MinObservations},
		[5]any{d.Window, d.Threshold, d.Hold, d.Reference, d.MinObservations}, "defaults are the product's")
	require.Empty(t, d.Baselines, "observed: no baseline until a reference period makes one")
	e, err := cli.errorRateConfig()
	require.NoError(t, err)
	require.False(t, e.BaselineSet)
	require.Equal(t, experiment.DefaultGuardConfig().Factor, cli.guardConfig().Factor)

	cli, err = parse(t, nil, "version", "--drift-threshold", "0", "--drift-hold", "0s", "--drift-baseline", "TASK=1,learning=3",
		"--error-baseline", "0", "--error-window", "1h", "--rollback-window", "2h")
	require.NoError(t, err)
	d, err = cli.driftConfig(map[string]mode.Baseline{"acme": {}}, nil)
	require.NoError(t, err)
	require.Zero(t, d.Threshold)
	require.Zero(t, d.Hold)
	require.Equal(t, map[mode.Mode]float64{mode.Task: 1, mode.Learning: 3}, d.Baselines[mode.Any].Distribution)
	require.NotContains(t, d.Baselines, "acme", "the flag's baseline overrides saved ones")
	e, err = cli.errorRateConfig()
	require.NoError(t, err)
	require.True(t, e.BaselineSet)
	require.Zero(t, e.Baseline, "0 is a baseline, not unset")
	require.Equal(t, time.Hour, e.Window)
	require.Equal(t, 2*time.Hour, cli.guardConfig().Window)
}

// A window the cross-encoder could never use is refused when the model loads (only then is its
// length known), naming the flag.
func TestRerankWindowLongerThanTheModel(t *testing.T) {
	cli, err := parse(t, nil, "version", "--rerank-model", modeltest.Dir(t, modeltest.CrossEncoder),
		"--ort-library", modeltest.ORTLibrary(), "--rerank-window", "600")
	require.NoError(t, err)
	a := newApp(&cli.Config, slog.New(slog.DiscardHandler))
	err = a.openModels(true)
	require.ErrorContains(t, err, "--rerank-window: rerank: window too long: 600 tokens, and the model takes at most 512")
}

// --cpu-profile writes a profile when asked and nothing when not; a path that cannot be created
// is an error naming the flag.
func TestCPUProfile(t *testing.T) {
	stop, err := cpuProfile("")
	require.NoError(t, err)
	stop()
	path := t.TempDir() + "/cpu.pprof"
	stop, err = cpuProfile(path)
	require.NoError(t, err)
	stop()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Positive(t, st.Size(), "a profile was written")
	_, err = cpuProfile(t.TempDir() + "/missing/cpu.pprof")
	require.ErrorContains(t, err, "--cpu-profile")
}

// A model directory that cannot serve its part is refused naming the flag, and the variable its
// value came from: "embed: unusable model directory" alone did not say which setting to change.
func TestUnusableModelNamesItsFlag(t *testing.T) {
	embedding, crossEncoder := modeltest.Dir(t, modeltest.Embedding), modeltest.Dir(t, modeltest.CrossEncoder)
	cli, err := parse(t, nil, "version", "--embed-model", crossEncoder, "--ort-library", modeltest.ORTLibrary())
	require.NoError(t, err)
	err = newApp(&cli.Config, slog.New(slog.DiscardHandler)).openModels(true)
	require.ErrorContains(t, err, "--embed-model: embed: unusable model directory: "+crossEncoder+" holds a model of kind cross-encoder")

	cli, err = parse(t, map[string]string{"RAGD_RERANK_MODEL": embedding}, "version", "--ort-library", modeltest.ORTLibrary())
	require.NoError(t, err)
	err = newApp(&cli.Config, slog.New(slog.DiscardHandler)).openModels(true)
	require.ErrorContains(t, err, "--rerank-model (from envar RAGD_RERANK_MODEL): rerank: unusable model directory: "+embedding)
}

// An ONNX Runtime library that does not load is refused naming --ort-library, as typed: the
// path alone ("embed: onnxruntime library /x.so: ...") did not say which setting to change.
func TestUnusableORTLibraryNamesItsFlag(t *testing.T) {
	embedding, crossEncoder := modeltest.Dir(t, modeltest.Embedding), modeltest.Dir(t, modeltest.CrossEncoder)
	missing := t.TempDir() + "/libonnxruntime.so.1"
	cli, err := parse(t, nil, "version", "--runtime", "onnxruntime", "--ort-library", missing, "--embed-model", embedding)
	require.NoError(t, err)
	err = newApp(&cli.Config, slog.New(slog.DiscardHandler)).openModels(false)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "--ort-library: embed: onnxruntime library not loaded: "+missing+": stat "), err.Error())

	cli, err = parse(t, map[string]string{"RAGD_ORT_LIBRARY": missing}, "version", "--runtime", "onnxruntime", "--rerank-model", crossEncoder)
	require.NoError(t, err)
	err = newApp(&cli.Config, slog.New(slog.DiscardHandler)).openModels(true)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "--ort-library (from envar RAGD_ORT_LIBRARY): rerank: onnxruntime library not loaded: "+missing), err.Error())
}

// `ragd models verify` loads its model on the configured runtime too, so a library that does not
// load is refused naming --ort-library there as well (it said only "embed: onnxruntime library
// not loaded").
func TestModelsVerifyNamesTheORTLibraryFlag(t *testing.T) {
	embedding, crossEncoder := modeltest.Dir(t, modeltest.Embedding), modeltest.Dir(t, modeltest.CrossEncoder)
	missing := t.TempDir() + "/libonnxruntime.so.1"
	for _, dir := range []string{embedding, crossEncoder} {
		cli, err := parse(t, nil, "models", "verify", dir, "--runtime", "onnxruntime", "--ort-library", missing)
		require.NoError(t, err)
		err = modelsVerifyCmd{Dir: dir}.Run(context.Background(), newApp(&cli.Config, slog.New(slog.DiscardHandler)))
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), "--ort-library: "), err.Error())
		require.ErrorContains(t, err, "onnxruntime library not loaded: "+missing)
	}
}
