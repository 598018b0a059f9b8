package pgcluster

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// serverPrograms are the PostgreSQL programs a cluster needs.
var serverPrograms = []string{"initdb", "pg_ctl", "postgres"}

// debianBinGlob matches the bin directories of Debian's and Ubuntu's PostgreSQL packages,
// which are not on PATH.
const debianBinGlob = "/usr/lib/postgresql/*/bin"

// findBinDir returns the directory holding the PostgreSQL server programs: configured when
// set, else pg_config's bindir, else the newest Debian-style install, else the one on PATH.
// It fails with ErrNoPostgres when none has them all (a client-only install does not).
func findBinDir(ctx context.Context, configured string) (string, error) {
	if configured != "" {
		if !hasServerPrograms(configured) {
			return "", fmt.Errorf("pgcluster: %w: %s lacks %s",
				ErrNoPostgres, configured, strings.Join(serverPrograms, "/"))
		}
		return configured, nil
	}

	var candidates []string
	// On Debian, pg_config reports the newest installed version, server or not.
	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, debianBinDirs()...)
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, dir := range candidates {
		if hasServerPrograms(dir) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("pgcluster: %w (looked at pg_config --bindir, %s and PATH)", ErrNoPostgres, debianBinGlob)
}

// debianBinDirs returns the directories matching debianBinGlob, newest version first.
func debianBinDirs() []string {
	type install struct {
		dir     string
		version float64 // "9.6" or "15": a float orders both correctly
	}
	dirs, _ := filepath.Glob(debianBinGlob) // the pattern is well-formed
	var installs []install
	for _, dir := range dirs {
		v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		if err == nil {
			installs = append(installs, install{dir, v})
		}
	}
	slices.SortFunc(installs, func(a, b install) int { return cmp.Compare(b.version, a.version) })
	out := make([]string, len(installs))
	for i, in := range installs {
		out[i] = in.dir
	}
	return out
}

func hasServerPrograms(dir string) bool {
	for _, name := range serverPrograms {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// serverVersion returns the version of the postgres program in binDir, such as "15.18".
func serverVersion(ctx context.Context, binDir string) (string, error) {
	// --version is answered before postgres checks that it is not running as root.
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("pgcluster: postgres --version: %w", err)
	}
	v, err := parseVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("pgcluster: postgres --version: %w", err)
	}
	return v, nil
}

// parseVersion extracts the version from postgres --version output, for example
// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
func parseVersion(s string) (string, error) {
	_, rest, ok := strings.Cut(s, "(PostgreSQL) ")
	fields := strings.Fields(rest)
	if !ok || len(fields) == 0 {
		return "", fmt.Errorf("unexpected output %q", strings.TrimSpace(s))
	}
	return fields[0], nil
}

// majorVersion returns the major part of a PostgreSQL (10 or later) version, as PG_VERSION
// holds it: "15" for "15.18", "17" for "17beta1".
func majorVersion(version string) string {
	end := strings.IndexFunc(version, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		return version
	}
	return version[:end]
}
