package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ingest"
)

// Job states.
const (
	jobQueued  = "queued"
	jobRunning = "running"
	jobDone    = "done"
	jobFailed  = "failed"
)

// job is one large upload ingested outside the request that posted it.
type job struct {
	ID       uuid.UUID
	Status   string
	Result   *ingestResultJSON
	Problem  *Problem
	Created  time.Time
	Finished *time.Time

	src ingest.Source
	who ragd.Principal // the uploader: the job writes and is read in its tenant only
}

type jobJSON struct {
	ID       uuid.UUID         `json:"id"`
	Status   string            `json:"status"`
	Result   *ingestResultJSON `json:"result,omitempty"`
	Problem  *Problem          `json:"problem,omitempty"`
	Created  time.Time         `json:"created_at"`
	Finished *time.Time        `json:"finished_at,omitempty"`
}

// jobs runs large uploads on a fixed number of workers from a bounded queue, so the memory and
// CPU that uploads hold is bounded whatever the clients send, and a request never waits for the
// extraction, chunking and embedding of a large file. Jobs live in memory: a restart forgets
// them (ingest is idempotent, so posting again is safe).
type jobs struct {
	mu    sync.Mutex
	all   map[uuid.UUID]*job
	queue chan *job
	keep  time.Duration // how long a finished job stays readable
}

const jobRetention = time.Hour

func newJobs(queued int) *jobs {
	return &jobs{all: map[uuid.UUID]*job{}, queue: make(chan *job, queued), keep: jobRetention}
}

// add queues src, or refuses it with ErrBusy when the queue is full.
func (js *jobs) add(who ragd.Principal, src ingest.Source) (*job, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	j := &job{ID: id, Status: jobQueued, Created: time.Now().UTC(), src: src, who: who}
	js.mu.Lock()
	defer js.mu.Unlock()
	js.expire()
	select {
	case js.queue <- j:
	default:
		return nil, fmt.Errorf("%w: the ingest queue is full (%d uploads waiting)", ragd.ErrBusy, cap(js.queue))
	}
	js.all[id] = j
	return j, nil
}

// expire forgets jobs finished longer ago than keep. Callers hold mu.
func (js *jobs) expire() {
	for id, j := range js.all {
		if j.Finished != nil && time.Since(*j.Finished) > js.keep {
			delete(js.all, id)
		}
	}
}

// get returns a copy of the state of a job of tenant.
func (js *jobs) get(tenant, id uuid.UUID) (jobJSON, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.all[id]
	if !ok || j.who.Tenant != tenant {
		return jobJSON{}, false
	}
	return jobJSON{ID: j.ID, Status: j.Status, Result: j.Result, Problem: j.Problem, Created: j.Created, Finished: j.Finished}, true
}

func (js *jobs) set(j *job, fn func(*job)) {
	js.mu.Lock()
	defer js.mu.Unlock()
	fn(j)
}

// work runs queued jobs until ctx ends.
func (s *Server) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-s.jobs.queue:
			s.runJob(ctx, j)
		}
	}
}

func (s *Server) runJob(ctx context.Context, j *job) {
	s.jobs.set(j, func(j *job) { j.Status = jobRunning })
	ctx, cancel := context.WithTimeout(ragd.WithPrincipal(ctx, j.who), s.cfg.IngestTimeout)
	defer cancel()
	res, err := s.ingest(ctx, j.src)
	now := time.Now().UTC()
	s.jobs.set(j, func(j *job) {
		j.Finished, j.src = &now, ingest.Source{} // the upload's bytes are no longer needed
		if err != nil {
			status, detail := statusOf(err)
			if status >= 500 {
				s.deps.Logger.ErrorContext(ctx, "ingest job failed", slog.String("job", j.ID.String()), slog.String("error", err.Error()))
			}
			p := problemOf(status, detail)
			j.Status, j.Problem = jobFailed, &p
			return
		}
		j.Status, j.Result = jobDone, &res
	})
}

// ingest records one source and catches the BM25 index up, so the next /v1/ask finds it.
func (s *Server) ingest(ctx context.Context, src ingest.Source) (ingestResultJSON, error) {
	res, err := s.deps.Ingester.IngestOne(ctx, src)
	if err != nil {
		return ingestResultJSON{}, err
	}
	if _, err := s.deps.Index.CatchUp(ctx, s.deps.Store); err != nil {
		return ingestResultJSON{}, fmt.Errorf("document stored, index not yet caught up (it will on its next poll): %w", err)
	}
	return ingestResultJSON{DocID: res.DocID, Version: res.Version, Status: string(res.Status), Chunks: res.Chunks}, nil
}

// getJob reports an ingest job.
func (s *Server) getJob(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	j, ok := s.jobs.get(ragd.PrincipalOf(c.Request().Context()).Tenant, id)
	if !ok {
		return fmt.Errorf("job %s: %w", id, ragd.ErrNotFound)
	}
	return c.JSON(http.StatusOK, j)
}

// resultStatus is the HTTP status of a finished ingest: 201 for a new version, 200 when nothing
// changed.
func resultStatus(res ingestResultJSON) int {
	if res.Status == string(ragd.Unchanged) {
		return http.StatusOK
	}
	return http.StatusCreated
}
