package invariant

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
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

func loadExtra(t *testing.T) []Example {
	t.Helper()
	exs, err := LoadExamples(filepath.Join("data", "invariants_extra.jsonl"))
	require.NoError(t, err)
	return exs
}

// TestReport prints the detector's precision and recall on invariants_train.jsonl:
//
//	go test ./invariant -run TestReport -v
//
// Two tables: grouped 5-fold cross-validation (models trained on four folds and the extra rows,
// scored on the fifth; the cues were written from the labelling conventions and these messages,
// so even this flatters them), and the shipped models on their own training data, which only
// shows how much they fit. Unseen labelled messages are the independent check
// (`ragd eval classifiers --invariants FILE`).
func TestReport(t *testing.T) {
	t.Parallel()
	exs := loadExamples(t)
	cv, err := CrossValidate(exs, loadExtra(t), 5, TrainOptions())
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
// embedded files (byte for byte on amd64, see modeltest.SameModel): the committed models are what
// `go generate ./invariant` produces.
func TestEmbeddedModelsAreReproducible(t *testing.T) {
	t.Parallel()
	m, err := Train(append(loadExamples(t), loadExtra(t)...), TrainOptions())
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Sticky.Save(&buf))
	modeltest.SameModel(t, stickyJSON, buf.Bytes(), "invariant/model_sticky.json is stale: run go generate ./invariant")
	buf.Reset()
	require.NoError(t, m.Type.Save(&buf))
	modeltest.SameModel(t, typeJSON, buf.Bytes(), "invariant/model_type.json is stale: run go generate ./invariant")
}
