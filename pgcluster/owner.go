package pgcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Who may stop a running cluster.
//
// Several ragd processes may use one private cluster at once (a server and an ingest, say).
// Three files beside the cluster directory keep them from stopping it under each other:
//
//	<dir>.lock   locked exclusively while a process starts, joins, leaves or stops the cluster
//	<dir>.users  locked shared by every process that uses the cluster, for as long as it does
//	<dir>.owner  what ragd knows of the running server: its postmaster, and whether it is detached
//
// The locks are flock(2) locks, which the kernel drops when their process ends however it ends,
// so a process killed with SIGKILL never counts as a user. The rules:
//
//   - A server a ragd process started for its own use is stopped by the last ragd process to
//     leave it: the one that started it if it leaves last, else the last of those that joined.
//     Nobody stops it while another ragd process uses it.
//   - A detached server (Config.Detached: `ragd db start`) outlives its users and is stopped only
//     by Stop (`ragd db stop`).
//   - A server that <dir>.owner does not describe was started outside ragd (pg_ctl by hand):
//     ragd uses it and never stops it, except through Stop.
//   - A server ragd started for its own use that nobody uses when a process arrives lost its
//     users to a crash: the arriving process adopts it, and it is stopped as above.
//   - A postmaster.pid naming a dead process (a crashed server) reads as not running; PostgreSQL
//     replaces it when it starts.

// ErrInUse means Stop was asked to stop a cluster that ragd processes are using.
var ErrInUse = errors.New("ragd processes are using this PostgreSQL")

// lockRetry is how often a process waiting for <dir>.lock tries again.
const lockRetry = 50 * time.Millisecond

// owner is the content of <dir>.owner.
type owner struct {
	// PID and Start identify the postmaster (postmaster.pid's first and third lines): a server
	// started since by someone else has another PID or start time.
	PID   int   `json:"pid"`
	Start int64 `json:"start"`
	// Detached servers are stopped only by Stop.
	Detached bool `json:"detached"`
	// StartedBy is the process that started the server, for messages.
	StartedBy int `json:"started_by"`
}

func (c *Cluster) lockPath() string   { return c.dir + ".lock" }
func (c *Cluster) usersPath() string  { return c.dir + ".users" }
func (c *Cluster) recordPath() string { return c.dir + ".owner" }

// lock takes <dir>.lock, waiting for the process holding it as long as ctx allows.
func (c *Cluster) lock(ctx context.Context) (*flock.Flock, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := os.MkdirAll(filepath.Dir(c.dir), 0o755); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	l := flock.New(c.lockPath())
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("pgcluster: locking %s: %w", l.Path(), err)
	}
	if !ok {
		return nil, fmt.Errorf("pgcluster: another ragd process kept %s locked (starting or stopping PostgreSQL): %w",
			l.Path(), ctx.Err())
	}
	return l, nil
}

// join counts this process as a user of the cluster until leave. Call it holding <dir>.lock:
// only a process holding that lock probes for users, so the shared lock is granted at once.
func (c *Cluster) join() error {
	l := flock.New(c.usersPath())
	ok, err := l.TryRLock()
	if err != nil {
		return fmt.Errorf("pgcluster: locking %s: %w", l.Path(), err)
	}
	if !ok {
		return fmt.Errorf("pgcluster: %s is locked exclusively by a process that does not hold %s", l.Path(), c.lockPath())
	}
	c.users = l
	return nil
}

func (c *Cluster) leave() error {
	if c.users == nil {
		return nil
	}
	err := c.users.Unlock()
	c.users = nil
	if err != nil {
		return fmt.Errorf("pgcluster: unlocking %s: %w", c.usersPath(), err)
	}
	return nil
}

// inUse reports whether any process, this one included, uses the cluster. Call it holding
// <dir>.lock.
func (c *Cluster) inUse() (bool, error) {
	probe := flock.New(c.usersPath())
	ok, err := probe.TryLock()
	if err != nil {
		return false, fmt.Errorf("pgcluster: locking %s: %w", probe.Path(), err)
	}
	if ok {
		return false, probe.Unlock()
	}
	return true, nil
}

// postmaster reads the PID and start time of the server from postmaster.pid.
func (c *Cluster) postmaster() (pid int, start int64, err error) {
	data, err := os.ReadFile(filepath.Join(c.dir, "postmaster.pid"))
	if err != nil {
		return 0, 0, fmt.Errorf("pgcluster: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 3 {
		return 0, 0, fmt.Errorf("pgcluster: %s/postmaster.pid is too short", c.dir)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	start, err2 := strconv.ParseInt(strings.TrimSpace(lines[2]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("pgcluster: %s/postmaster.pid: %w", c.dir, err)
	}
	return pid, start, nil
}

// record returns <dir>.owner when it describes the running server, else nil.
func (c *Cluster) record() (*owner, error) {
	data, err := os.ReadFile(c.recordPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	var o owner
	if err := json.Unmarshal(data, &o); err != nil {
		c.logger.Warn("pgcluster: ignoring an unreadable record", "file", c.recordPath(), "error", err)
		return nil, nil
	}
	pid, start, err := c.postmaster()
	if err != nil {
		return nil, err
	}
	if o.PID != pid || o.Start != start {
		return nil, nil // a record of an earlier server
	}
	return &o, nil
}

// writeRecord records the running server as ragd's, atomically.
func (c *Cluster) writeRecord(o owner) error {
	pid, start, err := c.postmaster()
	if err != nil {
		return err
	}
	o.PID, o.Start = pid, start
	data, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	tmp := c.recordPath() + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.Rename(tmp, c.recordPath()); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

func (c *Cluster) removeRecord() error {
	if err := os.Remove(c.recordPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// settle decides, holding <dir>.lock with the server running, whether this process may stop
// the server when it leaves (c.stops), and records a server it started.
func (c *Cluster) settle(ctx context.Context, detached bool) error {
	if c.started {
		c.stops = !detached
		return c.writeRecord(owner{Detached: detached, StartedBy: os.Getpid()})
	}
	rec, err := c.record()
	if err != nil {
		return err
	}
	switch {
	case rec == nil:
		c.logger.InfoContext(ctx, "pgcluster: PostgreSQL was started outside ragd; using it and leaving it running",
			"dir", c.dir)
		return nil
	case rec.Detached:
		c.logger.InfoContext(ctx, "pgcluster: PostgreSQL runs detached; `ragd db stop` stops it", "dir", c.dir)
		return nil
	}
	used, err := c.inUse()
	if err != nil {
		return err
	}
	if !used {
		c.logger.WarnContext(ctx, "pgcluster: adopting PostgreSQL left running by a ragd process that is gone",
			"dir", c.dir, "postmaster", rec.PID, "started_by", rec.StartedBy)
		c.adopted = true
	}
	if detached {
		rec.Detached = true
		return c.writeRecord(*rec)
	}
	c.stops = true
	return nil
}

// stopServer stops the server in pg_ctl's fast mode, which disconnects open sessions, waits
// for it to exit and forgets the record.
func (c *Cluster) stopServer(ctx context.Context) error {
	begin := time.Now()
	running, err := c.running(ctx)
	if err != nil {
		return err
	}
	if running {
		if err := c.run(ctx, "pg_ctl", "stop", "-D", c.dir, "-m", "fast", "-w", "-t", waitSeconds(ctx), "-s"); err != nil {
			return err
		}
		c.logger.InfoContext(ctx, "pgcluster: PostgreSQL stopped", "dir", c.dir, "duration", time.Since(begin))
	}
	return c.removeRecord()
}

// Stop stops the cluster in cfg.Dir, whoever started it (`ragd db stop`). It refuses with
// ErrInUse while ragd processes use it, unless force is set: they would lose their database.
// A cluster that is not running is no error.
func Stop(ctx context.Context, cfg Config, force bool) error {
	c, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	l, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if !c.initialized() {
		return nil
	}
	used, err := c.inUse()
	if err != nil {
		return err
	}
	if used {
		if !force {
			return fmt.Errorf("pgcluster: %w (%s); stop them first, or force it", ErrInUse, c.dir)
		}
		c.logger.WarnContext(ctx, "pgcluster: stopping PostgreSQL under the ragd processes that use it", "dir", c.dir)
	}
	return c.stopServer(ctx)
}

// State is what Inspect reports of a cluster.
type State struct {
	Dir     string `json:"dir"`
	Running bool   `json:"running"`
	// PID is the postmaster's, when it runs.
	PID int `json:"pid,omitempty"`
	// Owner says who stops a running server: "ragd" (the last ragd process to leave it),
	// "detached" (only `ragd db stop`), or "outside" (not started by ragd: nobody).
	Owner string `json:"owner,omitempty"`
	// InUse reports whether ragd processes use it.
	InUse bool   `json:"in_use"`
	URL   string `json:"url"`
	// StalePID: not running, but a postmaster.pid names a process that is gone (a server that
	// was killed or crashed). The next start replaces it.
	StalePID bool `json:"stale_pid,omitempty"`
}

// Inspect reports the state of the cluster in cfg.Dir without changing it.
func Inspect(ctx context.Context, cfg Config) (State, error) {
	c, err := open(ctx, cfg)
	if err != nil {
		return State{}, err
	}
	st := State{Dir: c.dir, URL: c.URL()}
	l, err := c.lock(ctx)
	if err != nil {
		return st, err
	}
	defer l.Unlock()
	if !c.initialized() {
		return st, nil
	}
	if st.InUse, err = c.inUse(); err != nil {
		return st, err
	}
	if st.Running, err = c.running(ctx); err != nil {
		return st, err
	}
	if !st.Running {
		_, err := os.Stat(filepath.Join(c.dir, "postmaster.pid"))
		st.StalePID = err == nil
		return st, nil
	}
	if st.PID, _, err = c.postmaster(); err != nil {
		return st, err
	}
	rec, err := c.record()
	switch {
	case err != nil:
		return st, err
	case rec == nil:
		st.Owner = "outside"
	case rec.Detached:
		st.Owner = "detached"
	default:
		st.Owner = "ragd"
	}
	return st, nil
}
