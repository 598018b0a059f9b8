package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
)

// hotels ingests reviews of two guesthouses, one document per review as a knowledge base of
// entities has them: the titles are the entities' names, the reviews never say them.
func (b *testBundle) hotels(t *testing.T, header ...string) {
	t.Helper()
	b.reviews(t, map[string][]string{
		"HOBSONS HOUSE": {"The bathroom was spotless.", "Breakfast was cold and the coffee weak.", "Free parking on site.",
			"Staff were friendly at check in.", "The garden is lovely in summer.", "Rooms face a quiet street."},
		"ALLENBELL": {"The bathrooms were not clean: mould in the bathrooms and hair in the sink.", "Quiet rooms.",
			"Parking costs extra.", "Breakfast had plenty of choice.", "Staff were slow to answer.", "Near the station."},
	}, header...)
}

// reviews ingests one document per review, titled by what it reviews, and indexes them.
func (b *testBundle) reviews(t *testing.T, reviews map[string][]string, header ...string) {
	t.Helper()
	for title, texts := range reviews {
		for i, text := range texts {
			resp, body := b.do(t, "POST", "/v1/documents", map[string]any{"title": title, "text": text, "format": "text",
				"source": fmt.Sprintf("review:%s:%d", title, i)}, header...)
			require.Less(t, resp.StatusCode, 300, "%s", body)
		}
	}
	_, err := b.index.CatchUp(b.ctx, b.store)
	require.NoError(t, err)
}

type focusTerm struct {
	Text   string  `json:"text"`
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
	Turn   int     `json:"turn"`
	Origin string  `json:"origin"`
}

func (b *testBundle) focus(t *testing.T, conv string, header ...string) []focusTerm {
	t.Helper()
	resp, body := b.do(t, "GET", "/v1/conversations/"+conv+"/sources", nil, header...)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return decode[struct {
		Focus struct {
			Terms []focusTerm `json:"terms"`
		} `json:"focus"`
	}](t, body).Focus.Terms
}

// The reply names the hotel; the follow-up asks about "their" bathrooms. The question alone
// finds the other hotel's review first (it says "bathrooms" and "clean"); searched with the
// conversation's focus, it finds the hotel the reply named.
func TestFocusFollowUpFindsTheNamedEntity(t *testing.T) {
	t.Parallel()
	// Each hotel has more chunks than a search returns: its documents are searched within.
	b := setup(t, options{pipeline: func(c *ask.Config) { c.FreshK = 4 }})
	b.hotels(t)

	alone := b.ask(t, "", "Are their bathrooms clean?")
	require.Equal(t, "ALLENBELL", alone.Sources[0].Title, "without a conversation the question finds the other hotel")

	one := b.ask(t, "", "I need a guesthouse in the west.")
	resp, body := b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages",
		map[string]any{"content": "The Hobsons House is a nice guesthouse in the west."})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	terms := b.focus(t, one.ConversationID)
	require.NotEmpty(t, terms)
	require.Equal(t, focusTerm{Text: "HOBSONS HOUSE", Kind: "entity", Weight: 1, Turn: 1, Origin: "reply"}, terms[0],
		"the recorded reply's name is in the focus before the next turn")

	two := b.ask(t, one.ConversationID, "Are their bathrooms clean?")
	require.Contains(t, two.Retrieval.Lists, "focus-bm25")
	require.Equal(t, "HOBSONS HOUSE", two.Sources[0].Title)
	require.Equal(t, "The bathroom was spotless.", two.Sources[0].Text)

	// A turn that names its own subject is left alone: no focus search.
	three := b.ask(t, one.ConversationID, "Is there mould in the bathrooms at the Allenbell?")
	require.NotContains(t, three.Retrieval.Lists, "focus-bm25")
	require.Equal(t, "ALLENBELL", three.Sources[0].Title)
	terms = b.focus(t, one.ConversationID)
	require.Equal(t, "ALLENBELL", terms[0].Text, "named by the user now: the heaviest")
	require.Equal(t, "user", terms[0].Origin)
	var hobsons focusTerm
	for _, term := range terms {
		if term.Text == "HOBSONS HOUSE" && term.Kind == "entity" {
			hobsons = term
		}
	}
	require.InDelta(t, 0.7*0.7, hobsons.Weight, 1e-9, "named at turn 1, decayed for turns 2 and 3")
}

// A tenant's focus knows its own titles only, and its focus search reads its own chunks only:
// tenant B has a HOBSONS HOUSE of its own, and no ALLENBELL.
func TestFocusIsPerTenant(t *testing.T) {
	t.Parallel()
	b := setup(t, options{keys: true, pipeline: func(c *ask.Config) { c.FreshK = 4 }})
	tenantB, err := b.store.EnsureTenant(b.ctx, "beta")
	require.NoError(t, err)
	bearer := func(tenant uuid.UUID, role ragd.Role) []string {
		return []string{"Authorization", "Bearer " + b.key(t, tenant, role)}
	}
	adminA, chatA := bearer(ragd.DefaultTenant, ragd.RoleAdmin), bearer(ragd.DefaultTenant, ragd.RoleChat)
	adminB, chatB := bearer(tenantB, ragd.RoleAdmin), bearer(tenantB, ragd.RoleChat)
	b.hotels(t, adminA...)
	b.reviews(t, map[string][]string{"HOBSONS HOUSE": {"Tenant B's note: the bathroom is clean.", "Tenant B: parking.",
		"Tenant B: rooms.", "Tenant B: staff.", "Tenant B: garden.", "Tenant B: breakfast."}}, adminB...)
	ask := func(header []string, conv, message string) askResponse {
		t.Helper()
		req := map[string]any{"message": message}
		if conv != "" {
			req["conversation_id"] = conv
		}
		resp, body := b.do(t, "POST", "/v1/ask", req, header...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		return decode[askResponse](t, body)
	}
	reply := func(header []string, conv, content string) {
		t.Helper()
		resp, body := b.do(t, "POST", "/v1/conversations/"+conv+"/messages", map[string]any{"content": content}, header...)
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	}

	// Tenant A: the focus search finds A's Hobsons House reviews, never B's.
	one := ask(chatA, "", "I need a guesthouse in the west.")
	reply(chatA, one.ConversationID, "The Hobsons House is a nice guesthouse in the west.")
	two := ask(chatA, one.ConversationID, "Are their bathrooms clean?")
	require.Contains(t, two.Retrieval.Lists, "focus-bm25")
	require.Equal(t, "The bathroom was spotless.", two.Sources[0].Text)
	for _, s := range two.Sources {
		require.NotContains(t, s.Text, "Tenant B", "tenant A's focus search read tenant B's chunks")
	}

	// Tenant B: a reply naming A's ALLENBELL names nothing B has.
	three := ask(chatB, "", "I need a guesthouse.")
	reply(chatB, three.ConversationID, "The Allenbell and the Hobsons House are both fine.")
	var entities []string
	for _, term := range b.focus(t, three.ConversationID, chatB...) {
		if term.Kind == "entity" {
			entities = append(entities, term.Text)
		}
	}
	require.Equal(t, []string{"HOBSONS HOUSE"}, entities, "tenant B's focus names B's own titles only")
	four := ask(chatB, three.ConversationID, "Is their bathroom clean?")
	require.NotEmpty(t, four.Sources)
	for _, s := range four.Sources {
		require.Contains(t, s.Text, "Tenant B")
	}
}

// --focus-weight 0 turns the focus off: no focus search, nothing tracked.
func TestFocusOff(t *testing.T) {
	t.Parallel()
	b := setup(t, options{pipeline: func(c *ask.Config) { c.FreshK = 4; c.FocusWeight = 0 }})
	b.hotels(t)
	one := b.ask(t, "", "I need a guesthouse in the west. Is the Hobsons House nice?")
	resp, body := b.do(t, "POST", "/v1/conversations/"+one.ConversationID+"/messages",
		map[string]any{"content": "The Hobsons House is a nice guesthouse in the west."})
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	two := b.ask(t, one.ConversationID, "Are their bathrooms clean?")
	require.NotContains(t, two.Retrieval.Lists, "focus-bm25")
	require.Empty(t, b.focus(t, one.ConversationID))
}
