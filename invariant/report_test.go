package invariant

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ragd/ragd/internal/modeltest"
)

func loadExamples(t *testing.T) []Example {
	t.Helper()
	exs, err := LoadExamples(filepath.Join(modeltest.SharedDir(t), "data", "labels", "invariants_train.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, exs)
	return exs
}

// loaded is the detector's data, read once for the package's tests.
var loaded struct {
	sync.Once
	d   Data
	err error
}

func data(t *testing.T) Data {
	t.Helper()
	labels := filepath.Join(modeltest.SharedDir(t), "data", "labels")
	loaded.Do(func() { loaded.d, loaded.err = LoadData(labels, ".") })
	require.NoError(t, loaded.err)
	return loaded.d
}

// TestReport prints the detector's precision and recall on its labelled rows (Data.Rows):
//
//	go test ./invariant -run TestReport -v
//
// Two tables: grouped 5-fold cross-validation (models trained on four folds and the extra rows,
// scored on the fifth; the cues were written from the labelling conventions and the rows of
// invariants_train.jsonl, so even this flatters them), and the shipped models on their own
// training data, which only shows how much they fit. Unseen labelled messages are the independent check
// (`ragd eval classifiers --invariants FILE`).
func TestReport(t *testing.T) {
	t.Parallel()
	d := data(t)
	exs := d.Rows
	cv, _, err := CrossValidate(exs, d.Extra, 5, TrainOptions(), d.Debugging)
	require.NoError(t, err)
	fit := Evaluate(exs, Detect)

	var b strings.Builder
	fmt.Fprintf(&b, "span match: same type and character IoU >= %.2f; msg: the message has the type at all\n\n", MinIoU)
	for _, part := range []struct {
		title string
		r     Report
	}{
		{fmt.Sprintf("grouped 5-fold cross-validation, %d messages", len(exs)), cv},
		{"in-sample: the shipped models on data they were trained on", fit},
	} {
		b.WriteString(part.title + "\n")
		require.NoError(t, part.r.WriteText(&b))
		b.WriteString("\n")
	}
	t.Log("\n" + b.String())

	// A floor well under the measured figures, to catch a change that breaks the detector
	// rather than to certify it.
	p, _ := cv.Sticky.Precision()
	r, _ := cv.Sticky.Recall()
	require.Greater(t, p, 0.7, "cross-validated sticky span precision")
	require.Greater(t, r, 0.8, "cross-validated sticky span recall")
}

// TestEmbeddedModelsAreReproducible retrains on the shared and extra data and compares with the
// embedded files (byte for byte on amd64, see modeltest.SameModel): the committed models, the
// P(DEBUGGING) model among them, are what `go generate ./invariant` produces.
func TestEmbeddedModelsAreReproducible(t *testing.T) {
	t.Parallel()
	dm, err := TrainDebugging(filepath.Join(modeltest.SharedDir(t), "data", "labels"), ".")
	require.NoError(t, err)
	var dbuf bytes.Buffer
	require.NoError(t, dm.Save(&dbuf))
	modeltest.SameModel(t, debuggingJSON, dbuf.Bytes(), "invariant/"+DebuggingFile+" is stale: run go generate ./invariant")

	d := data(t)
	m, err := Train(append(slices.Clip(d.Rows), d.Extra...), TrainOptions(), d.Debugging)
	require.NoError(t, err)
	for i, got := range m.Parts() {
		var buf bytes.Buffer
		require.NoError(t, got.Save(&buf))
		want := [...][]byte{stickyJSON, typeJSON, uncuedStickyJSON, uncuedTypeJSON, gateJSON}[i]
		modeltest.SameModel(t, want, buf.Bytes(), "invariant/"+ModelFiles[i]+" is stale: run go generate ./invariant")
	}
}

// TestLoadDataRefusesStaleOutOfFold: the out-of-fold P(DEBUGGING) file must have been computed
// from the current mode data and model, or LoadData fails and says how to regenerate it.
func TestLoadDataRefusesStaleOutOfFold(t *testing.T) {
	t.Parallel()
	labels := filepath.Join(modeltest.SharedDir(t), "data", "labels")
	root := t.TempDir()
	dir := filepath.Join(root, "invariant")
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		require.NoError(t, os.WriteFile(to, b, 0o644))
	}
	for _, f := range []string{"data/invariants_select.jsonl", "data/invariants_real.jsonl", "data/invariants_extra.jsonl", OutOfFoldFile} {
		copyFile(f, filepath.Join(dir, f))
	}
	copyFile(filepath.Join("..", "mode", "data", "modes_extra.jsonl"), filepath.Join(root, "mode", "data", "modes_extra.jsonl"))
	_, err := LoadData(labels, dir)
	require.NoError(t, err, "the committed file, copied")

	// One more extra row for the mode model: its out-of-fold probabilities may change.
	f, err := os.OpenFile(filepath.Join(root, "mode", "data", "modes_extra.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id": "mode-extra-test", "text": "it crashes", "mode": "DEBUGGING", "prev": "", "source": "authored"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = LoadData(labels, dir)
	require.ErrorIs(t, err, ErrStaleOutOfFold)
}
