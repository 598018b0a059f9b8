package main

import (
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, env map[string]string, args ...string) (*CLI, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var cli CLI
	p, err := kong.New(&cli, kong.DefaultEnvars("RAGD"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	_, err = p.Parse(args)
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
		{[]string{"version", "--chunk-tokens", "8"}, nil, "--chunk-tokens/--chunk-overlap: max_tokens: must be at least 32"},
		{[]string{"version", "--chunk-overlap", "200"}, nil, "overlap: must be less than half of max_tokens"},
		{[]string{"version", "--fresh-k", "0"}, nil, "--fresh-k must be at least 1, got 0"},
		{[]string{"version", "--fresh-k", "5000"}, nil, "--fresh-k/--rrf-k: fresh k 5000 out of range"},
		{[]string{"version", "--embed-batch", "0"}, nil, "--embed-batch and --rerank-batch must be at least 1"},
		{[]string{"version"}, map[string]string{"RAGD_RRF_K": "-1"}, "--rrf-k must be at least 1, got -1"},
		{[]string{"version", "--llm-url", "localhost:11434"}, nil, "--llm-*"},
		{[]string{"version", "--log-level", "loud"}, nil, "--log-level must be one of"},
		{[]string{"version"}, map[string]string{"RAGD_FRESH_K": "many"}, "--fresh-k"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := parse(t, tc.env, tc.args...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestConfigDefaultsAndEnvironment(t *testing.T) {
	cli, err := parse(t, map[string]string{"RAGD_DATABASE_URL": "postgres://db/ragd", "RAGD_FRESH_K": "20"}, "version", "--rrf-k", "30")
	require.NoError(t, err)
	require.Equal(t, "postgres://db/ragd", cli.DatabaseURL, "RAGD_* variables set flags")
	require.Equal(t, 20, cli.FreshK)
	require.Equal(t, 30, cli.RRFK)
	require.Equal(t, 256, cli.ChunkTokens, "defaults are the product's numbers")
	require.Equal(t, "auto", cli.Runtime)
	require.Equal(t, 40, cli.askConfig().RerankTop)
}

// --kg is one switch for both halves of the knowledge graph: entities recorded at ingest and the
// graph's list fused into follow-ups. Off by default.
func TestConfigKGSwitchesIngestAndAsk(t *testing.T) {
	cli, err := parse(t, nil, "version")
	require.NoError(t, err)
	require.False(t, cli.askConfig().Graph)
	require.False(t, cli.ingestConfig(nil).Graph)
	cli, err = parse(t, nil, "version", "--kg")
	require.NoError(t, err)
	require.True(t, cli.askConfig().Graph)
	require.True(t, cli.ingestConfig(nil).Graph)
}
