package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

// Once a key exists every request needs one: `ragd ask --key` sends it, and without it the
// client reports the server's 401.
func TestAskSendsTheKey(t *testing.T) {
	dbURL, data := ingestedDataDir(t)
	out, err := ragdCmd(t, dbURL, "keys", "create", "--role", "chat").Output()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	key := lines[len(lines)-1]
	srv := startReplicaIn(t, "server", dbURL, data)

	out, err = ragdCmd(t, dbURL, "ask", "--url", srv.url, "smoke alarms").CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "401")
	require.Contains(t, string(out), "send an API key in the Authorization header", "the hint survives the log's redaction")
	require.Contains(t, string(out), "give ask a key with --key KEY", "the flag to use is named")
	require.NotContains(t, string(out), `"type"`, "the problem's detail, not its JSON")

	out, err = ragdCmd(t, dbURL, "ask", "--url", srv.url, "--key", key, "smoke alarms").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "conversation ")
	require.Contains(t, string(out), "[A] Home Fire Safety")
	require.NotContains(t, string(out), key, "the key is never printed")

	// The API names conversation_id; the user typed --conversation, so that is what is named.
	for _, tc := range []struct{ id, want string }{
		{"nope", "is not a conversation id"},
		{"00000000-0000-0000-0000-000000000000", "is not a conversation id"}, // the API would start a new one
		{"0190f5b4-0000-7000-8000-000000000000", "--conversation names no conversation of --key's tenant"},
	} {
		out, err = ragdCmd(t, dbURL, "ask", "--url", srv.url, "--key", key, "--conversation", tc.id, "smoke alarms").CombinedOutput()
		require.Error(t, err, "%s", out)
		require.Contains(t, string(out), tc.want)
		require.Contains(t, string(out), "--conversation")
		require.NotContains(t, string(out), "conversation_id")
	}
}

// `ragd ask --help` lists the flags ask reads, not the server's; the server's help still
// lists them all (hiding them for ask's help does not outlast it).
func TestAskHelpListsAsksFlags(t *testing.T) {
	help := func(args ...string) string {
		var cli CLI
		var out bytes.Buffer
		p, err := kong.New(&cli, envars("RAGD"), kong.Help(commandHelp), kong.Writers(&out, &out), kong.Exit(func(int) {}))
		require.NoError(t, err)
		_, _ = parseArgs(p, args)
		return out.String()
	}
	ask := help("ask", "--help")
	for _, flag := range []string{"<message>", "--url", "--conversation", "--key", "--wait", "--json", "--log-level", "--log-format", "--help"} {
		require.Contains(t, ask, flag)
	}
	for _, flag := range []string{"--data-dir", "--database-url", "--carry-weight", "--embed-model", "--drift-baseline"} {
		require.NotContains(t, ask, flag, "ask does not read %s", flag)
	}
	require.Less(t, strings.Count(ask, "\n"), 40, "%s", ask)

	serve := help("serve", "--help")
	require.Contains(t, serve, "--carry-weight")
	require.Contains(t, serve, "--data-dir")
	require.Contains(t, help("ask", "--help"), "--url", "asked twice, the same help")
}
