// Package modeltest finds the stand-in models and evaluation data that sit beside the checkout in
// ../shared, for tests that run real models.
package modeltest

import (
	"os"
	"path/filepath"
	"testing"
)

const (
	// Embedding is the stand-in for all-MiniLM-L6-v2.
	Embedding = "minilm-l6-embedding-standin"
	// CrossEncoder is the stand-in for ms-marco-MiniLM-L-6-v2.
	CrossEncoder = "minilm-l6-cross-encoder-standin"
)

// SharedDir returns ../shared relative to the module root (or $RAGD_SHARED_DIR).
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("RAGD_SHARED_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("modeltest: no go.mod above the test directory")
		}
		dir = parent
	}
}

// Dir returns the directory of a stand-in model, failing the test when it is missing: these
// tests exist to prove the runtimes work, and skipping them would hide that they cannot.
func Dir(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join(SharedDir(t), "models", name)
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("stand-in model %s not found (%v): tests expect ../shared beside the checkout or RAGD_SHARED_DIR", name, err)
	}
	return d
}

// ORTLibrary is the ONNX Runtime library tests load: $RAGD_ORT_LIBRARY, or "" to search where
// scripts/setup.sh installs it.
func ORTLibrary() string { return os.Getenv("RAGD_ORT_LIBRARY") }
