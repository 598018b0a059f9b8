package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/migrations"
)

// The database of testdata/upgrade009/rows.sql: its conversation and the keys ragd 24e18c8 made
// (throwaway secrets: their database exists only as that file).
const (
	upgradeConversation = "01a21325-4732-7eac-904e-cc6d986817b2"
	upgradeChatKey      = "ragd_Ow9DovXx3r1Ziii4FhVtWroFRI8WO9A7xFnAwGH8LTs"
	upgradeAuditorKey   = "ragd_TuLh9AjqobXrH6VM-Ope69tWbpFPB49p8KDcbKwbrRQ"
	upgradeAcmeKey      = "ragd_90yb4ZO78A1wInqeREAvuEhZWEoedgfhzBcfS--7A2k"
)

// loadUpgrade009 empties the database, migrates it to 009 and loads the rows ragd of 009 wrote,
// then copies every row, as JSON, into upgrade_test.before for after the migration.
func loadUpgrade009(t testing.TB, url string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
	require.NoError(t, err)
	require.NoError(t, migrations.Migrate(ctx, conn, migrations.Options{EmbeddingDim: dbtest.Dim, Version: 9}))
	rows, err := os.ReadFile("testdata/upgrade009/rows.sql")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, string(rows))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `CREATE SCHEMA upgrade_test;
		CREATE TABLE upgrade_test.before (tbl text, r jsonb);
		DO $$ DECLARE t text; BEGIN
		FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_version' LOOP
			EXECUTE format('INSERT INTO upgrade_test.before SELECT %L, to_jsonb(x) FROM public.%I x', t, t);
		END LOOP; END $$`)
	require.NoError(t, err)
}

// An upgrade with live data: a database ragd 24e18c8 (migrations 001-009) wrote, served by this
// ragd, which migrates it at start-up. Every row reads as it was (columns added since aside); the
// conversation's citations and the ratings export byte for byte as that server exported them;
// its keys work; and the conversation goes on: turn 1's safety requirement is in the rules of
// turns 5 and 6 (the history window, two messages, never reaches turn 1), sources keep their
// letters and sentences their markers, and the export of before is the start of the export after.
func TestUpgradeFrom009(t *testing.T) {
	t.Parallel()
	b := setup(t, options{keys: true, before: loadUpgrade009, pipeline: func(c *ask.Config) { c.HistoryMessages = 2 }})
	_, err := b.index.CatchUp(b.ctx, b.store)
	require.NoError(t, err)

	conn := b.connect(t)
	defer conn.Close(b.ctx)
	var tables []string
	rs, err := conn.Query(b.ctx, "SELECT DISTINCT tbl FROM upgrade_test.before ORDER BY tbl")
	require.NoError(t, err)
	tables, err = pgx.CollectRows(rs, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, tables, "message_citations")
	for _, tbl := range tables {
		var before, after, lost int
		require.NoError(t, conn.QueryRow(b.ctx, fmt.Sprintf(`SELECT
			(SELECT count(*) FROM upgrade_test.before WHERE tbl = $1), (SELECT count(*) FROM public.%[1]s),
			(SELECT count(*) FROM upgrade_test.before b WHERE tbl = $1 AND NOT EXISTS (SELECT FROM public.%[1]s x
				WHERE (SELECT jsonb_object_agg(k, v) FROM jsonb_each(to_jsonb(x)) e(k, v) WHERE b.r ? k) = b.r))`,
			pgx.Identifier{tbl}.Sanitize()), tbl).Scan(&before, &after, &lost))
		require.Equal(t, before, after, "rows of %s", tbl)
		require.Zero(t, lost, "rows of %s that read otherwise after the migration", tbl)
	}

	chat, auditor := []string{"Authorization", "Bearer " + upgradeChatKey}, []string{"Authorization", "Bearer " + upgradeAuditorKey}
	export := func(path string) []byte {
		t.Helper()
		resp, body := b.do(t, "GET", path, nil, auditor...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		return body
	}
	golden := func(name string) []byte {
		t.Helper()
		want, err := os.ReadFile(filepath.Join("testdata/upgrade009", name))
		require.NoError(t, err)
		return want
	}
	citations := "/v1/citations?conversation_id=" + upgradeConversation + "&format="
	require.Equal(t, string(golden("citations.jsonl")), string(export(citations+"jsonl")))
	require.Equal(t, string(golden("citations.csv")), string(export(citations+"csv")))
	require.Equal(t, string(golden("feedback.jsonl")), string(export("/v1/feedback?format=jsonl")))
	resp, body := b.do(t, "GET", "/v1/conversations", nil, "Authorization", "Bearer "+upgradeAcmeKey)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Len(t, decode[conversationList](t, body).Conversations, 1, "acme's own conversation")

	// What the conversation showed under 009: each document's letter, each sentence's marker.
	letters, markers := map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(golden("citations.jsonl")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Marker, Fact string
			Document     struct{ ID string }
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		letters[c.Document.ID], markers[c.Fact] = c.Marker[:1], c.Marker
	}
	require.NoError(t, sc.Err())
	for turn, q := range []string{"What should I keep at home for a fire?", "And for a burn?"} {
		resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"conversation_id": upgradeConversation, "message": q}, chat...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		r := decode[askResponse](t, body)
		require.Equal(t, 5+turn, r.Turn)
		var rules []string
		for _, inv := range r.Context.Invariants {
			rules = append(rules, inv.Text)
		}
		require.Contains(t, rules, "never suggest burning candles.", "turn %d", r.Turn)
		require.NotEmpty(t, r.Sources)
		for _, s := range r.Sources {
			if l, ok := letters[s.DocID]; ok {
				require.Equal(t, l, s.Letter, "%s's letter", s.Title)
			}
			for _, f := range s.Facts {
				if m, ok := markers[f.Text]; ok {
					require.Equal(t, m, f.Marker, "the marker of %q", f.Text)
				}
			}
		}
	}
	require.True(t, bytes.HasPrefix(export(citations+"jsonl"), golden("citations.jsonl")), "009's citations, then the new turns'")
}
