package index

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// lockWait is how long opening an index waits for another process to let go of it.
const lockWait = 2 * time.Second

// LockedError is ErrLocked with what the opener knows: the lock file, who holds it (when the
// holder left its name) and how long it waited.
type LockedError struct {
	Lock   string        // the lock file
	Holder string        // "pid 1234 (ragd) since ..."; empty when unknown
	Waited time.Duration // how long the open waited
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.Holder != "" {
		who = e.Holder
	}
	return fmt.Sprintf("%s: the lock %s is held by %s and was not free after %s", ErrLocked, e.Lock, who, e.Waited)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// openLayout opens (and so locks) dir's layout.bolt. Held by another process, it logs once what
// it waits for and who holds it, then waits up to lockWait: a server holds it as long as it
// runs, and a silent wait looks like a hang.
func openLayout(dir string, logger *slog.Logger) (*bolt.DB, error) {
	lock := filepath.Join(dir, "layout.bolt")
	// A timeout this short tries the lock once.
	db, err := bolt.Open(lock, 0o644, &bolt.Options{Timeout: time.Nanosecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		holder := readHolder(dir)
		logger.Info("waiting for the BM25 index's lock, held by another process", slog.String("lock", lock),
			slog.String("holder", cmp.Or(holder, "unknown")), slog.Duration("wait", lockWait))
		db, err = bolt.Open(lock, 0o644, &bolt.Options{Timeout: lockWait})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("index %s: %w", dir, &LockedError{Lock: lock, Holder: readHolder(dir), Waited: lockWait})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("index: opening %s: %w", dir, err)
	}
	// Leave our name for a process that finds the index locked. Only a courtesy: an index
	// that cannot record it still works.
	holder := fmt.Sprintf("%d %s %s", os.Getpid(), time.Now().UTC().Format(time.RFC3339), filepath.Base(os.Args[0]))
	_ = os.WriteFile(holderFile(dir), []byte(holder), 0o644)
	return db, nil
}

func holderFile(dir string) string { return filepath.Join(dir, "layout.holder") }

// releaseHolder removes the name openLayout left, before the lock is released.
func releaseHolder(dir string) {
	if raw, err := os.ReadFile(holderFile(dir)); err == nil {
		if pid, _, _ := strings.Cut(string(raw), " "); pid == strconv.Itoa(os.Getpid()) {
			_ = os.Remove(holderFile(dir))
		}
	}
}

// readHolder describes the process whose name is in dir's holder file, or "" when there is none
// or that process is gone (a holder that crashed leaves its file behind).
func readHolder(dir string) string {
	raw, err := os.ReadFile(holderFile(dir))
	if err != nil {
		return ""
	}
	f := strings.SplitN(strings.TrimSpace(string(raw)), " ", 3)
	if len(f) != 3 {
		return ""
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return ""
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return ""
	}
	return fmt.Sprintf("pid %d (%s) since %s", pid, f[2], f[1])
}
