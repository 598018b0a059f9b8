package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/experiment"
	"github.com/ragd/ragd/mode"
	"github.com/ragd/ragd/request"
)

type feedbackJSON struct {
	ID             uuid.UUID         `json:"id"`
	MessageID      uuid.UUID         `json:"message_id"`
	ConversationID uuid.UUID         `json:"conversation_id"`
	Turn           int               `json:"turn"`
	Rating         string            `json:"rating"`
	Reason         string            `json:"reason"`
	Sources        []ragd.SourceFlag `json:"sources"`
	Mode           string            `json:"mode"`
	Arm            string            `json:"arm"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

func feedbackOf(f ragd.Feedback) feedbackJSON {
	if f.Sources == nil {
		f.Sources = []ragd.SourceFlag{}
	}
	return feedbackJSON{ID: f.ID, MessageID: f.MessageID, ConversationID: f.ConversationID, Turn: f.Turn, Rating: f.Rating,
		Reason: f.Reason, Sources: f.Sources, Mode: f.Mode, Arm: f.Arm, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// feedback records a user's rating of an answer (an assistant message): up or down, an optional
// reason and per-source flags. It feeds the mode's error rate and the experiment's guard. 201
// for a first rating, 200 when it replaces one.
func (s *Server) feedback(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	req, err := request.DecodeFeedback(raw)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := s.deps.Store.SaveFeedback(ctx, ragd.NewFeedback{MessageID: id, Rating: req.Rating, Reason: req.Reason, Sources: req.Sources})
	if err != nil {
		return err
	}
	// The monitors count each answer's rating once, as it stands: a first rating is observed, a
	// changed one revises what was observed, the same one sent again changes nothing.
	bad, tenant := f.Rating == ragd.RatingDown, ask.TenantOf(ctx)
	errs, guard := s.deps.Monitors.ErrorRate, s.deps.Monitors.Experiment
	switch {
	case f.Previous == "":
		if errs != nil {
			errs.Observe(tenant, mode.Mode(f.Mode), bad)
		}
		if guard != nil {
			guard.Feedback(f.Arm, bad)
		}
	case f.Previous != f.Rating:
		if errs != nil {
			errs.Revise(tenant, mode.Mode(f.Mode), bad)
		}
		if guard != nil {
			guard.Revise(f.Arm, bad)
		}
	}
	status := http.StatusOK
	if f.CreatedAt.Equal(f.UpdatedAt) {
		status = http.StatusCreated
	}
	return c.JSON(status, feedbackOf(*f))
}

var feedbackCSVHeader = []string{"id", "message_id", "conversation_id", "turn", "rating", "reason", "sources", "mode", "arm", "created_at", "updated_at"}

func feedbackCSV(f ragd.Feedback) []string {
	var flags []string
	for _, sf := range f.Sources {
		flags = append(flags, sf.Source+":"+sf.Flag)
	}
	return []string{f.ID.String(), f.MessageID.String(), f.ConversationID.String(), strconv.Itoa(f.Turn), f.Rating, f.Reason,
		strings.Join(flags, " "), f.Mode, f.Arm, f.CreatedAt.UTC().Format(time.RFC3339Nano), f.UpdatedAt.UTC().Format(time.RFC3339Nano)}
}

// feedbackExport exports feedback for auditors with the citations: filtered by conversation and
// by when it was last given; JSON in pages (limit, after), JSONL and CSV streamed whole.
func (s *Server) feedbackExport(c echo.Context) error {
	if err := request.Only(c.QueryParams(), "conversation_id", "from", "to", "after", "limit", "format"); err != nil {
		return err
	}
	f, err := request.FeedbackFilter(c.QueryParams())
	if err != nil {
		return err
	}
	format, err := request.ExportFormat(c.QueryParams(), c.Request().Header.Get(echo.HeaderAccept), "feedback")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if format != request.MIMEJSON {
		return streamExport(s, c, format, "feedback", feedbackCSVHeader, func(f ragd.Feedback) any { return feedbackOf(f) }, feedbackCSV,
			func(fn func(ragd.Feedback) error) error {
				return batched(f.Limit, func(limit int, fn func(ragd.Feedback) error) error {
					g := f
					g.Limit = limit
					return s.deps.Store.Feedback(ctx, g, func(fb ragd.Feedback) error {
						f.AfterID = fb.ID // the next batch starts after it
						return fn(fb)
					})
				}, fn)
			})
	}
	return exportPage(c, "feedback", f.Limit, feedbackOf, func(fb feedbackJSON) any { return fb.ID },
		func(limit int, fn func(ragd.Feedback) error) error {
			f.Limit = limit
			return s.deps.Store.Feedback(ctx, f, fn)
		})
}

// experimentReport reports the experiment per arm and mode stratum over a period (from, to).
func (s *Server) experimentReport(c echo.Context) error {
	if err := request.Only(c.QueryParams(), "from", "to"); err != nil {
		return err
	}
	from, to, err := request.TimeRange(c.QueryParams())
	if err != nil {
		return err
	}
	rows, err := s.deps.Store.ExperimentStats(c.Request().Context(), ragd.ExperimentFilter{From: from, To: to})
	if err != nil {
		return err
	}
	modes := make([]string, len(mode.Modes))
	for i, m := range mode.Modes {
		modes[i] = string(m)
	}
	r := experiment.NewReport(s.deps.Experiment, rows, modes)
	out := map[string]any{"report": r}
	if g := s.deps.Monitors.Experiment; g != nil {
		out["treatment_enabled"] = g.Enabled()
		out["rollbacks"] = g.Rollbacks()
	}
	return c.JSON(http.StatusOK, out)
}

// driftState shows the caller's tenant's drift baseline and state.
func (s *Server) driftState(c echo.Context) error {
	d := s.deps.Monitors.Drift
	if d == nil {
		return echo.NewHTTPError(http.StatusConflict, "no drift monitor runs")
	}
	tenant := ask.TenantOf(c.Request().Context())
	kl, drifting := d.State(tenant)
	out := map[string]any{"tenant": tenant, "kl": kl, "drifting": drifting}
	if b, ok := d.Baseline(tenant); ok {
		out["baseline"] = b
	}
	return c.JSON(http.StatusOK, out)
}

// setBaseline sets the caller's tenant's drift baseline (a baseline for every tenant is the
// --drift-baseline flag's, the operator's).
func (s *Server) setBaseline(c echo.Context) error {
	d := s.deps.Monitors.Drift
	if d == nil {
		return echo.NewHTTPError(http.StatusConflict, "no drift monitor runs")
	}
	raw, err := s.body(c)
	if err != nil {
		return err
	}
	dist, err := request.DecodeBaseline(raw)
	if err != nil {
		return err
	}
	b := mode.Baseline{Distribution: map[mode.Mode]float64{}}
	for m, v := range dist {
		b.Distribution[mode.Mode(strings.ToUpper(m))] = v
	}
	// Checked here too, so that the error names the body's field, not mode's.
	if err := b.Validate(); err != nil {
		return ragd.Invalidf("distribution", "%v", err)
	}
	tenant := ask.TenantOf(c.Request().Context())
	if err := d.SetBaseline(tenant, b); err != nil {
		return err
	}
	b.Source = mode.BaselineSet
	return c.JSON(http.StatusOK, map[string]any{"tenant": tenant, "baseline": b})
}
