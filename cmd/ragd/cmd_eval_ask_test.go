package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// eval ask's flags: the request limit defaults to a minute and 0 means none; a value the run
// cannot use is refused naming the flag typed.
func TestEvalAskFlags(t *testing.T) {
	dir := t.TempDir()
	cli, err := parse(t, nil, "eval", "ask", dir)
	require.NoError(t, err)
	require.Equal(t, time.Minute, cli.Eval.Ask.Timeout)
	require.NoError(t, cli.Eval.Ask.validate())

	cli, err = parse(t, nil, "eval", "ask", dir, "--timeout", "0")
	require.NoError(t, err)
	require.Zero(t, cli.Eval.Ask.Timeout)
	require.NoError(t, cli.Eval.Ask.validate(), "0 is no limit")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout=-1s"}, "--timeout must be 0 (no limit) or more, got -1s"},
		{[]string{"--concurrency", "0"}, "--concurrency must be at least 1, got 0"},
		{[]string{"--warmup=-1"}, "--warmup must be 0 or more, got -1"},
		{[]string{"--n=-3"}, "--n must be 0 (each query once) or more, got -3"},
	} {
		cli, err := parse(t, nil, append([]string{"eval", "ask", dir}, tc.args...)...)
		require.NoError(t, err, "%v", tc.args)
		require.EqualError(t, cli.Eval.Ask.validate(), tc.want)
	}
}
