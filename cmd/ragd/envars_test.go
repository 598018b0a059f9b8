package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/require"
)

func model(t *testing.T) *kong.Application {
	t.Helper()
	var cli CLI
	p, err := kong.New(&cli, envars("RAGD"), kong.Exit(func(int) {}))
	require.NoError(t, err)
	return p.Model
}

// A misspelt variable is named, with the one meant; the variables of every subcommand's flags
// (both spellings of --bm25-weight's), the tooling's and other programs' are not.
func TestUnknownEnvarsAreNamed(t *testing.T) {
	got := unknownEnvars(model(t), "RAGD", []string{
		"PATH=/bin", "HF_TOKEN=x", "RAGD_DATABASE_URL=postgres://", "RAGD_BM25_WEIGHT=1", "RAGD_BM_25_WEIGHT=1",
		"RAGD_EVAL_KEY=k", "RAGD_KEY=k", "RAGD_TEST_DATABASE_URL=postgres://", "RAGD_TEST_ANYTHING=1", "RAGD_SHARED_DIR=/s",
		"RAGD_DATABSE_URL=postgres://", "RAGD_EMBED_MODL=/m", "RAGD_ZZZZZZZZZZZZ=1",
	})
	require.Equal(t, []string{
		"RAGD_DATABSE_URL is not a ragd variable, ignored; did you mean RAGD_DATABASE_URL?",
		"RAGD_EMBED_MODL is not a ragd variable, ignored; did you mean RAGD_EMBED_MODEL?",
		"RAGD_ZZZZZZZZZZZZ is not a ragd variable, ignored (`ragd --help` names each flag's variable)",
	}, got)
}

// ragd itself warns at start-up, once per variable, on stderr; the command still runs. The
// test's own environment (RAGD_TEST_DATABASE_URL, RAGD_SHARED_DIR) draws no warning.
func TestMisspeltVariableWarnsAtStartUp(t *testing.T) {
	cmd := exec.Command(os.Args[0], "version")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "RAGD_DATABSE_URL=postgres://x")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	require.Contains(t, stdout.String(), "ragd ")
	require.Equal(t, 1, strings.Count(stderr.String(), "not a ragd variable"), "%s", stderr.String())
	require.Contains(t, stderr.String(), "RAGD_DATABSE_URL is not a ragd variable, ignored; did you mean RAGD_DATABASE_URL?")
}

// Every RAGD_ variable the repository's code, scripts and tests name is one a flag reads or one
// of toolVariables (so ragd warns about none of them), and toolVariables names no variable the
// repository has stopped using.
func TestRepositoryVariablesAreKnown(t *testing.T) {
	app := model(t)
	name := regexp.MustCompile(`\bRAGD_[A-Z0-9_]*[A-Z0-9]\b`) // not a prefix: "RAGD_TEST_ names"

	self, err := filepath.Abs("envars_test.go") // its misspellings are on purpose
	require.NoError(t, err)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch ext := filepath.Ext(path); {
		case path == self:
		case ext == ".go", ext == ".sh", ext == ".yaml", ext == ".yml", d.Name() == "Dockerfile", strings.Contains(path, "/.ci/"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, n := range name.FindAllString(string(b), -1) {
				if !seen[n] {
					for _, w := range unknownEnvars(app, "RAGD", []string{n + "=x"}) {
						t.Errorf("%s: %s", path, w)
					}
				}
				seen[n] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	for n := range toolVariables {
		require.True(t, seen[n], "toolVariables names %s, which nothing in the repository uses", n)
	}
}
