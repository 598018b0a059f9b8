//go:build unix

package pgcluster

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// account is the OS user that PostgreSQL's programs run as.
type account struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32 // supplementary groups
	home   string
	self   bool // the user of this process: no credential switch
}

// serverAccount returns the account to run PostgreSQL as: this process's user, or the user
// named name when this process is root, because the postgres server refuses to run as root.
func serverAccount(name string) (*account, error) {
	if os.Geteuid() != 0 {
		return &account{
			uid:  uint32(os.Geteuid()),
			gid:  uint32(os.Getegid()),
			self: true,
		}, nil
	}

	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: PostgreSQL refuses to run as root, like ragd does here, and user %q "+
			"to run it as instead was not found (is PostgreSQL installed?): %w", name, err)
	}
	uid, err := parseID(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: user %s: %w", name, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("pgcluster: user %s is root, and PostgreSQL refuses to run as root", name)
	}
	gid, err := parseID(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: user %s: %w", name, err)
	}
	groupIDs, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("pgcluster: groups of user %s: %w", name, err)
	}
	groups := make([]uint32, 0, len(groupIDs))
	for _, s := range groupIDs {
		g, err := parseID(s)
		if err != nil {
			return nil, fmt.Errorf("pgcluster: groups of user %s: %w", name, err)
		}
		groups = append(groups, g)
	}
	return &account{name: name, uid: uid, gid: gid, groups: groups, home: u.HomeDir}, nil
}

func parseID(s string) (uint32, error) {
	id, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("non-numeric id %q: %w", s, err)
	}
	return uint32(id), nil
}

// String names the account for messages.
func (a *account) String() string {
	if a.name != "" {
		return a.name
	}
	return "uid " + strconv.FormatUint(uint64(a.uid), 10)
}

// sysProcAttr makes a child process run as the account; nil for the current user.
func (a *account) sysProcAttr() *syscall.SysProcAttr {
	if a.self {
		return nil
	}
	return &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: a.groups},
	}
}

// checkTraversable returns an error naming the topmost directory on the way from / to dir
// (inclusive) that the account may not search. It judges by the permission bits alone
// (ACLs are not consulted), so it errs on the side of reporting a problem.
func (a *account) checkTraversable(dir string) error {
	if a.self {
		return nil // this process reached dir (or will fail creating it, with a clear error)
	}
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, d := range slices.Backward(chain) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if !a.canSearch(fi) {
			st := fi.Sys().(*syscall.Stat_t)
			return fmt.Errorf("pgcluster: PostgreSQL runs as user %s because ragd runs as root, "+
				"but %s (mode %v, owner uid %d) is not traversable by that user; "+
				"choose a data directory that user can reach (--data-dir), "+
				"or use an external database (--database-url)", a, d, fi.Mode().Perm(), st.Uid)
		}
	}
	return nil
}

// canSearch reports whether the account may enter the directory fi describes.
func (a *account) canSearch(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == a.uid:
		return perm&0o100 != 0
	case st.Gid == a.gid || slices.Contains(a.groups, st.Gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// chown gives path to the account; nothing to do for the current user.
func (a *account) chown(path string) error {
	if a.self {
		return nil
	}
	if err := os.Lchown(path, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// checkOwns returns an error unless the account owns path.
func (a *account) checkOwns(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == a.uid {
		return nil
	}
	return fmt.Errorf("pgcluster: %s is owned by uid %d, but PostgreSQL runs as %s (uid %d) here; "+
		"run ragd as the directory's owner or hand the directory over (chown -R)", path, st.Uid, a, a.uid)
}
