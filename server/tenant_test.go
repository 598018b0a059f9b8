package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/internal/dbtest"
	"github.com/ragd/ragd/mode"
	"github.com/ragd/ragd/server"
)

// tenantRows fingerprints every row of one tenant, table by table, as the superuser sees them:
// any write to the tenant changes it.
func (b *testBundle) tenantRows(t *testing.T, tenant uuid.UUID) map[string]string {
	t.Helper()
	conn := b.connect(t)
	defer conn.Close(b.ctx)
	out := map[string]string{}
	for _, table := range []string{"documents", "document_versions", "chunks", "conversations", "messages",
		"conversation_sources", "message_citations", "conversation_markers", "idempotency_keys", "api_keys",
		"message_feedback", "mode_baselines", "experiment_slots"} {
		var fp string
		require.NoError(t, conn.QueryRow(b.ctx, fmt.Sprintf(
			`SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM %s x WHERE tenant_id = $1`,
			pgx.Identifier{table}.Sanitize()), tenant).Scan(&fp))
		out[table] = fp
	}
	return out
}

// key makes an API key of tenant with role.
func (b *testBundle) key(t *testing.T, tenant uuid.UUID, role ragd.Role) string {
	t.Helper()
	_, secret, err := b.store.CreateKey(ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenant, Role: ragd.RoleAdmin}), role, string(role))
	require.NoError(t, err)
	return secret
}

// Every route of the OpenAPI document, called by every role of another tenant with the ids of
// this tenant's conversation, message, document, job and key: nothing of it is read or written.
// Every route called by every role of the tenant itself: roles hold, auditors write nothing.
func TestTenantsAreIsolatedOnEveryRoute(t *testing.T) {
	t.Parallel()
	drift, err := mode.NewDrift(mode.DefaultDriftConfig())
	require.NoError(t, err)
	errs, err := mode.NewErrorRate(mode.DefaultErrorRateConfig())
	require.NoError(t, err)
	b := setup(t, options{corpus: true, keys: true, cfg: server.Config{AsyncBytes: 40},
		monitors: ask.Monitors{Drift: drift, ErrorRate: errs}})
	tenantA := ragd.DefaultTenant // holds the corpus
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	keys := map[uuid.UUID]map[ragd.Role]string{tenantA: {}, tenantB: {}}
	for _, tenant := range []uuid.UUID{tenantA, tenantB} {
		for _, role := range []ragd.Role{ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin} {
			keys[tenant][role] = b.key(t, tenant, role)
		}
	}
	bearer := func(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

	// Tenant A's things: a conversation with a turn, a pin and a reply; a document; a job; a key.
	resp, body := b.do(t, "POST", "/v1/ask", map[string]any{"message": "smoke alarms"}, bearer(keys[tenantA][ragd.RoleChat])...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	turn := decode[askResponse](t, body)
	require.NotEmpty(t, turn.Sources)
	docA := turn.Sources[0].DocID
	resp, body = b.do(t, "POST", "/v1/conversations/"+turn.ConversationID+"/messages", map[string]any{"content": "Test them monthly."},
		bearer(keys[tenantA][ragd.RoleChat])...)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "POST", "/v1/messages/"+turn.MessageID+"/feedback", map[string]any{"rating": "up", "reason": "spot on"},
		bearer(keys[tenantA][ragd.RoleChat])...)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "PUT", "/v1/admin/drift/baseline", map[string]any{"distribution": map[string]float64{"TASK": 1}},
		bearer(keys[tenantA][ragd.RoleAdmin])...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "POST", "/v1/documents", map[string]any{"text": "Tenant A's private notes on the generator room.", "source": "notes"},
		bearer(keys[tenantA][ragd.RoleAdmin])...)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
	jobA := b.wait(t, resp.Header.Get("Location"), bearer(keys[tenantA][ragd.RoleAdmin])...)
	require.Equal(t, "done", jobA.Status, "%+v", jobA)
	ctxA := ragd.WithPrincipal(b.ctx, ragd.Principal{Tenant: tenantA, Role: ragd.RoleAdmin})
	keyList, err := b.store.Keys(ctxA)
	require.NoError(t, err)
	keyA := keyList[0].ID.String()
	docARow, err := b.store.Document(ctxA, uuid.MustParse(docA))
	require.NoError(t, err)
	secretsOfA := []string{turn.ConversationID, turn.MessageID, docA, jobA.ID, keyA, jobA.Result.DocID, "Test them monthly", "generator room", "spot on"}

	// Tenant B ingests a document under A's source key: identities are per tenant.
	resp, body = b.do(t, "POST", "/v1/documents", map[string]any{"text": "Beta keeps its own notes on floods and on the river gauges.", "source": docARow.SourceKey},
		bearer(keys[tenantB][ragd.RoleAdmin])...)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
	require.Equal(t, "done", b.wait(t, resp.Header.Get("Location"), bearer(keys[tenantB][ragd.RoleAdmin])...).Status)

	ids := map[string]string{"conversations": turn.ConversationID, "messages": turn.MessageID, "documents": docA, "jobs": jobA.ID, "keys": keyA}
	bodies := map[string]any{
		"ask":                map[string]any{"message": "smoke alarms", "conversation_id": turn.ConversationID, "pins": []string{docA}},
		"renameConversation": map[string]any{"title": "taken over"},
		"recordReply":        map[string]any{"content": "forged reply"},
		"postDocument":       map[string]any{"text": "replaced content", "source": docARow.SourceKey},
		"createKey":          map[string]any{"role": "admin"},
		"feedback":           map[string]any{"rating": "down", "reason": "forged rating"},
		"setBaseline":        map[string]any{"distribution": map[string]float64{"LEARNING": 1}},
	}
	spec, err := server.Spec()
	require.NoError(t, err)
	param := regexp.MustCompile(`\{(\w+)\}`)
	type call struct{ method, path, op string }
	var calls []call
	for path, item := range spec.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue // health, metrics and the document itself are public
		}
		for method, op := range item.Operations() {
			resource := strings.Split(path, "/")[2]
			p := param.ReplaceAllStringFunc(path, func(m string) string {
				if m == "{doc_id}" {
					return docA
				}
				return ids[resource]
			})
			calls = append(calls, call{method, p, op.OperationID})
		}
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].path+calls[i].method < calls[j].path+calls[j].method })

	before := b.tenantRows(t, tenantA)
	cases := 0
	// Another tenant, every role: no byte of A in any answer, no change to A.
	for _, c := range calls {
		for _, role := range []ragd.Role{ragd.RoleChat, ragd.RoleAuditor, ragd.RoleAdmin} {
			cases++
			resp, body := b.do(t, c.method, c.path, bodies[c.op], bearer(keys[tenantB][role])...)
			sent, _ := json.Marshal(bodies[c.op])
			for _, s := range secretsOfA {
				if strings.Contains(c.path, s) || strings.Contains(string(sent), s) {
					// An error may name what the caller sent; only what it did not send would leak.
					body = []byte(strings.ReplaceAll(string(body), s, ""))
				}
				require.NotContains(t, string(body), s, "%s %s as B's %s -> %d", c.method, c.path, role, resp.StatusCode)
			}
			// Documents, keys and drift baselines a tenant writes are its own.
			if c.method != "GET" && resp.StatusCode/100 == 2 && c.op != "postDocument" && c.op != "createKey" && c.op != "setBaseline" {
				t.Fatalf("%s %s as B's %s -> %d: a write naming A's things succeeded: %s", c.method, c.path, role, resp.StatusCode, body)
			}
		}
	}
	require.Equal(t, before, b.tenantRows(t, tenantA), "another tenant changed nothing of A")
	base, ok := drift.Baseline(tenantA.String())
	require.True(t, ok)
	require.Equal(t, map[mode.Mode]float64{mode.Task: 1}, base.Distribution, "B's admin set B's baseline, not A's")

	// The tenant's own auditor on every route: reads only, writes nothing.
	for _, c := range calls {
		cases++
		resp, body := b.do(t, c.method, c.path, bodies[c.op], bearer(keys[tenantA][ragd.RoleAuditor])...)
		if c.method != "GET" || c.op == "listKeys" || c.op == "getJob" || strings.HasPrefix(c.path, "/v1/admin/") {
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s as A's auditor: %s", c.method, c.path, body)
		} else {
			require.Equal(t, 2, resp.StatusCode/100, "%s %s as A's auditor: %s", c.method, c.path, body)
		}
	}
	require.Equal(t, before, b.tenantRows(t, tenantA), "the auditor wrote nothing")

	// The tenant's chat key: no admin work (documents, jobs, keys).
	for _, c := range calls {
		if !strings.Contains(c.path, "/documents") && !strings.Contains(c.path, "/jobs") && !strings.Contains(c.path, "/keys") {
			continue
		}
		cases++
		resp, body := b.do(t, c.method, c.path, bodies[c.op], bearer(keys[tenantA][ragd.RoleChat])...)
		if c.method == "GET" && strings.Contains(c.path, "/documents") {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s as A's chat key: %s", c.method, c.path, body)
		} else {
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s as A's chat key: %s", c.method, c.path, body)
		}
	}
	for _, table := range []string{"documents", "document_versions", "chunks", "api_keys"} {
		require.Equal(t, before[table], b.tenantRows(t, tenantA)[table], "A's chat key changed %s", table)
	}

	// A reply is recorded only by the key that asked the turn (or an admin).
	other := b.key(t, tenantA, ragd.RoleChat)
	resp, body = b.do(t, "POST", "/v1/ask", map[string]any{"message": "generator indoors", "conversation_id": turn.ConversationID},
		bearer(keys[tenantA][ragd.RoleChat])...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "POST", "/v1/conversations/"+turn.ConversationID+"/messages", map[string]any{"content": "forged"}, bearer(other)...)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "POST", "/v1/conversations/"+turn.ConversationID+"/messages", map[string]any{"content": "real"},
		bearer(keys[tenantA][ragd.RoleChat])...)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	// So is a rating of the answer.
	resp, body = b.do(t, "POST", "/v1/messages/"+turn.MessageID+"/feedback", map[string]any{"rating": "down"}, bearer(other)...)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	resp, body = b.do(t, "POST", "/v1/messages/"+turn.MessageID+"/feedback", map[string]any{"rating": "down"}, bearer(keys[tenantA][ragd.RoleAdmin])...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "an admin of the tenant may: %s", body)

	// Unauthenticated and unknown keys, on every route: each /v1 route runs authenticate itself
	// (server.New), so one left without it would show here.
	rows := b.tenantRows(t, tenantA)
	for _, c := range calls {
		for _, h := range [][]string{nil, bearer("ragd_not-a-key"), {"Authorization", "Basic YTpi"}} {
			cases++
			resp, body := b.do(t, c.method, c.path, bodies[c.op], h...)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s with %v: %s", c.method, c.path, h, body)
		}
	}
	require.Equal(t, rows, b.tenantRows(t, tenantA), "no request without a valid key changed anything")
	t.Logf("cross-tenant cases: %d routes x 3 roles of another tenant, plus the tenant's auditor and chat roles on every route, plus 3 unauthenticated on every route: %d cases", len(calls), cases)
}

// Row-level security alone, with no filter of ragd's: ragd's login connected for tenant B sees
// none of A's rows in any table, cannot write into A, cannot TRUNCATE, UPDATE, DELETE or disable
// the append-only trigger of citations, and has no more powerful role to switch to.
func TestRowLevelSecurityAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, options{corpus: true})
	r := b.ask(t, "", "smoke alarms")
	b.rate(t, r.MessageID, "up")
	require.NoError(t, b.store.SaveModeBaseline(b.ctx, []byte(`{"distribution":{"TASK":1}}`)))
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	login, err := b.store.Login(b.ctx)
	require.NoError(t, err)
	require.Empty(t, login.Privileged, "the server's pool logs in as %s, which owns nothing", login.User)

	conn := dbtest.AppConn(t, b.url, tenantB.String())
	defer conn.Close(context.Background())
	for _, table := range []string{"documents", "document_versions", "chunks", "conversations", "messages",
		"conversation_sources", "message_citations", "conversation_markers", "entities", "api_keys",
		"message_feedback", "mode_baselines", "experiment_slots"} {
		var n int
		require.NoError(t, conn.QueryRow(b.ctx, "SELECT count(*) FROM "+table).Scan(&n), table)
		require.Zero(t, n, "tenant B sees %d rows of %s", n, table)
	}
	var conv uuid.UUID
	admin := b.connect(t)
	defer admin.Close(b.ctx)
	for _, table := range []string{"message_feedback", "mode_baselines", "experiment_slots"} {
		require.Positive(t, b.count(t, table), "A has rows of %s for B not to see", table)
	}
	require.NoError(t, admin.QueryRow(b.ctx, "SELECT id FROM conversations LIMIT 1").Scan(&conv))
	tag, err := conn.Exec(b.ctx, "UPDATE conversations SET title = 'hijacked' WHERE id = $1", conv)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "an update of A's row from B touches nothing")
	_, err = conn.Exec(b.ctx, "INSERT INTO conversations (id, tenant_id) VALUES ($1, $2)", uuid.New(), ragd.DefaultTenant)
	require.ErrorContains(t, err, "row-level security")
	var owner string
	require.NoError(t, admin.QueryRow(b.ctx, "SELECT tableowner FROM pg_tables WHERE tablename = 'message_citations'").Scan(&owner))
	citations := func() string {
		var sum string
		require.NoError(t, admin.QueryRow(b.ctx, "SELECT count(*) || ':' || md5(string_agg(c::text, ',' ORDER BY id)) FROM message_citations c").Scan(&sum))
		return sum
	}
	before := citations()
	// Each statement as tenant A (the citations' own) and as every tenant ('all').
	for _, tenant := range []string{ragd.DefaultTenant.String(), "all"} {
		_, err := conn.Exec(b.ctx, "SELECT set_config('ragd.tenant', $1, false)", tenant)
		require.NoError(t, err)
		for _, sql := range []string{"TRUNCATE message_citations", "ALTER TABLE message_citations DISABLE TRIGGER USER",
			"DELETE FROM message_citations", "UPDATE message_citations SET marker = 'Z9'",
			"SET ROLE " + pgx.Identifier{owner}.Sanitize(), "SET SESSION AUTHORIZATION " + pgx.Identifier{owner}.Sanitize(),
			"SET ROLE ragd_app", "TRUNCATE message_citations", "DELETE FROM message_citations", "RESET ROLE"} {
			_, err := conn.Exec(b.ctx, sql)
			if sql == "SET ROLE ragd_app" || sql == "RESET ROLE" {
				require.NoError(t, err) // ragd_app, or back to the login: no more powerful
				continue
			}
			require.Error(t, err, sql)
		}
	}
	_, err = conn.Exec(b.ctx, "SELECT set_config('ragd.tenant', $1, false)", tenantB.String())
	require.NoError(t, err)
	_, err = conn.Exec(b.ctx, "SET row_security = off")
	require.NoError(t, err)
	_, err = conn.Exec(b.ctx, "SELECT count(*) FROM documents")
	require.ErrorContains(t, err, "row-level security", "turning row security off makes queries fail, not see more")
	require.NotEqual(t, "0:", before[:2])
	require.Equal(t, before, citations(), "the citations are all there, unchanged")
}
