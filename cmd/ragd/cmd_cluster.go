package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ragd/ragd/pgcluster"
)

// dbCmd runs the private PostgreSQL by hand. Every other command starts (or joins) it by
// itself and the last one to leave stops it; a detached cluster stays up between commands.
type dbCmd struct {
	Start  dbStartCmd  `cmd:"" help:"Start the private PostgreSQL detached (it runs until 'ragd db stop') and print its URL."`
	Stop   dbStopCmd   `cmd:"" help:"Stop the private PostgreSQL."`
	Status dbStatusCmd `cmd:"" help:"Say whether the private PostgreSQL runs, who stops it, and whether ragd processes use it."`
}

type clusterDirFlag struct {
	Dir string `help:"Cluster directory (default <data-dir>/postgres)." type:"path" env:"-"`
}

func (f clusterDirFlag) config(a *app) pgcluster.Config {
	dir := f.Dir
	if dir == "" {
		dir = a.cfg.clusterDir()
	}
	return pgcluster.Config{Dir: dir, Logger: a.logger}
}

type dbStartCmd struct {
	clusterDirFlag
	Set map[string]string `help:"A server setting for this start, repeatable (--set fsync=off for a throwaway test cluster)." placeholder:"NAME=VALUE" env:"-"`
}

func (c dbStartCmd) Run(ctx context.Context, a *app) error {
	cfg := c.config(a)
	cfg.Detached, cfg.Settings = true, c.Set
	if len(c.Set) > 0 {
		// A server found running keeps its own settings (pgcluster.Config.Settings): starting it
		// "with" settings it will not take would tell the user they hold.
		if st, err := pgcluster.Inspect(ctx, cfg); err == nil && st.Running {
			return fmt.Errorf("--set: the server in %s runs already and keeps its settings; stop it first (ragd db stop) for --set to apply", st.Dir)
		}
	}
	cl, err := pgcluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println(cl.URL())
	return cl.Close(ctx) // detached: it keeps running
}

type dbStopCmd struct {
	clusterDirFlag
	Force bool `help:"Stop it even while ragd processes use it (they lose their database)." env:"-"`
}

func (c dbStopCmd) Run(ctx context.Context, a *app) error {
	if st, err := pgcluster.Inspect(ctx, c.config(a)); err == nil && !st.Running {
		fmt.Printf("%s: not running\n", st.Dir) // else a stop that had nothing to do said nothing at all
		return nil
	}
	err := pgcluster.Stop(ctx, c.config(a), c.Force)
	if errors.Is(err, pgcluster.ErrInUse) {
		return fmt.Errorf("%w (--force stops it anyway)", err)
	}
	return err
}

type dbStatusCmd struct {
	clusterDirFlag
}

func (c dbStatusCmd) Run(ctx context.Context, a *app) error {
	st, err := pgcluster.Inspect(ctx, c.config(a))
	if err != nil {
		return err
	}
	fmt.Print(dbStatusText(st))
	return nil
}

// dbStatusText says what `ragd db status` says of st, including what happens next to a cluster
// whose ragd process was killed (kill -9 runs no clean-up).
func dbStatusText(st pgcluster.State) string {
	switch {
	case !st.Running && st.StalePID:
		return fmt.Sprintf("%s: not running; its postmaster.pid names a process that is gone (a server killed or crashed): "+
			"the next ragd command (or 'ragd db start') starts a new server and replaces that file\n", st.Dir)
	case !st.Running:
		return fmt.Sprintf("%s: not running\n", st.Dir)
	}
	stoppedBy := map[string]string{
		"ragd":     "the last ragd process that uses it, when it exits",
		"detached": "'ragd db stop' (detached)",
		"outside":  "nobody: it was started outside ragd ('ragd db stop' can)",
	}[st.Owner]
	if st.Owner == "ragd" && !st.InUse {
		stoppedBy = "nobody now: the ragd processes that used it are gone (killed?); the next ragd command adopts it, " +
			"and the last one to leave it stops it ('ragd db stop' stops it now)"
	}
	return fmt.Sprintf("%s: running, postmaster pid %d\nstopped by: %s\nused by ragd processes: %t\nurl: %s\n",
		st.Dir, st.PID, stoppedBy, st.InUse, st.URL)
}
