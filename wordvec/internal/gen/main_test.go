package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/wordvec"
)

// vec is a vector as the npm JSON holds it: Dim values, the L2 norm, the word's index.
func vec(fill float64, index int) string {
	v := make([]string, 0, wordvec.Dim+2)
	for j := range wordvec.Dim {
		v = append(v, fmt.Sprint(fill+float64(j)/1000))
	}
	return "[" + strings.Join(append(v, "1.5", fmt.Sprint(index)), ",") + "]"
}

func TestReadKeepsTheMostFrequentWords(t *testing.T) {
	js := `{"precision":8,"size":3,"dimensions":100,"words":["the","shrimp","zebu"],` +
		`"vectors":{"zebu":` + vec(-0.3, 2) + `,"the":` + vec(0.1, 0) + `,"shrimp":` + vec(0.2, 1) + `},"unkVector":[0]}`
	path := filepath.Join(t.TempDir(), "e.json")
	require.NoError(t, os.WriteFile(path, []byte(js), 0o644))

	words, vectors, err := read(path, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"the", "shrimp"}, words)
	require.InDelta(t, 0.2, vectors[1][0], 1e-7)
	require.InDelta(t, 0.2+0.099, vectors[1][wordvec.Dim-1], 1e-7)

	all, err := readAllWords(path)
	require.NoError(t, err)
	require.Equal(t, []string{"the", "shrimp", "zebu"}, all)

	bad := strings.Replace(js, `"shrimp":`+vec(0.2, 1), `"shrimp":`+vec(0.2, 0), 1)
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
	_, _, err = read(path, 2)
	require.ErrorContains(t, err, "index 0")
}
