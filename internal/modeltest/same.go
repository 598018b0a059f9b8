package modeltest

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"testing"
)

// SameModel fails t unless got, a model file just trained, is the committed want. On amd64, where
// the committed files are made, they must be equal byte for byte; elsewhere the compiler may fuse
// multiply-adds and round the last bits differently, so numbers need only agree to 1e-9 relative
// while everything else is equal.
func SameModel(t testing.TB, want, got []byte, stale string) {
	t.Helper()
	if runtime.GOARCH == "amd64" {
		if !bytes.Equal(want, got) {
			t.Fatal(stale)
		}
		return
	}
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("the committed model: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("the trained model: %v", err)
	}
	if !near(w, g) {
		t.Fatal(stale)
	}
}

// near reports whether two decoded JSON values are equal, numbers to 1e-9 relative.
func near(a, b any) bool {
	switch a := a.(type) {
	case float64:
		b, ok := b.(float64)
		return ok && math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !near(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !near(v, b[k]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
