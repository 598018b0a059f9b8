package main

import (
	"strings"
	"testing"

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

	out, err = ragdCmd(t, dbURL, "ask", "--url", srv.url, "--key", key, "smoke alarms").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "conversation ")
	require.Contains(t, string(out), "[A] Home Fire Safety")
	require.NotContains(t, string(out), key, "the key is never printed")
}
