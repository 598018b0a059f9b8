package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
)

// PredictionsVersion is the format of a Predictions file; LoadPredictions refuses another.
const PredictionsVersion = 1

// ErrOtherPredictions is the error of predictions that cannot be paired with this data's: made
// from other rows, or at another K or number of folds.
var ErrOtherPredictions = errors.New("the predictions are not of this data")

// Predictions are one model's out-of-fold predictions at perturbations 1..K of training
// (Seeds[k-1], of whatever type the model's comparison scores), with what identifies them.
// Saved, they let a model trained in another tree (other code, other data, another pinned
// model) be the baseline of a comparison: what pairs two runs is the rows they score, K and
// folds, not the code or the models that made the predictions.
type Predictions[T any] struct {
	Version int `json:"version"`
	// Rows are the ids of the rows scored, in order, Extra those of rows scored in a second
	// cross-validation only (none for some models), and Hash a SHA-256 of both (HashJSON).
	Rows  []string `json:"rows"`
	Extra []string `json:"extra,omitempty"`
	Hash  string   `json:"hash"`
	K     int      `json:"k"`
	Folds int      `json:"folds"`
	// Options are the options the model was trained with.
	Options Options `json:"options"`
	Seeds   []T     `json:"seeds"`
}

// HashJSON is the SHA-256 of lists of rows as JSON, one a line, each list after its length:
// two runs score the same rows if it is the same.
func HashJSON[T any](lists ...[]T) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, rows := range lists {
		fmt.Fprintf(h, "%d\n", len(rows))
		for _, r := range rows {
			// Labelled rows hold strings, numbers and booleans: they always encode.
			_ = enc.Encode(r)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Match returns nil when p can be paired with predictions of the rows with ids rows and extra
// and hash (HashJSON) at k perturbations of folds-fold cross-validations, else an error wrapping
// ErrOtherPredictions that says what differs.
func (p Predictions[T]) Match(rows, extra []string, hash string, k, folds int) error {
	if !slices.Equal(p.Rows, rows) || !slices.Equal(p.Extra, extra) {
		return fmt.Errorf("%w: they are of %d rows and %d extra rows, this data has %d and %d%s",
			ErrOtherPredictions, len(p.Rows), len(p.Extra), len(rows), len(extra),
			firstDiff(append(slices.Clip(p.Rows), p.Extra...), append(slices.Clip(rows), extra...)))
	}
	if p.Hash != hash {
		return fmt.Errorf("%w: the rows have the same ids but other contents (texts, labels, sources...)", ErrOtherPredictions)
	}
	if p.K != k || p.Folds != folds {
		return fmt.Errorf("%w: they are of %d perturbations of %d-fold cross-validations, not %d of %d folds",
			ErrOtherPredictions, p.K, p.Folds, k, folds)
	}
	if len(p.Seeds) != p.K {
		return fmt.Errorf("%w: %d perturbations of predictions, not K = %d", ErrOtherPredictions, len(p.Seeds), p.K)
	}
	return nil
}

// firstDiff names the first row id where theirs and ours differ, for Match's error.
func firstDiff(theirs, ours []string) string {
	for i := range max(len(theirs), len(ours)) {
		switch {
		case i >= len(theirs):
			return fmt.Sprintf(" (%s is not in them)", ours[i])
		case i >= len(ours):
			return fmt.Sprintf(" (%s is not in this data)", theirs[i])
		case theirs[i] != ours[i]:
			return fmt.Sprintf(" (row %d is %s there, %s here)", i+1, theirs[i], ours[i])
		}
	}
	return ""
}

// Save writes p as JSON.
func (p Predictions[T]) Save(path string) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("classify: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("classify: %w", err)
	}
	return nil
}

// LoadPredictions reads predictions that Save wrote, refusing another format version.
func LoadPredictions[T any](path string) (Predictions[T], error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Predictions[T]{}, fmt.Errorf("classify: %w", err)
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Predictions[T]{}, fmt.Errorf("classify: %s: %w", path, err)
	}
	if v.Version != PredictionsVersion {
		return Predictions[T]{}, fmt.Errorf("%w: %s is of format version %d, this build reads version %d",
			ErrOtherPredictions, path, v.Version, PredictionsVersion)
	}
	var p Predictions[T]
	if err := json.Unmarshal(b, &p); err != nil {
		// Such as another model's predictions: the invariant detector's spans are no mode labels.
		return Predictions[T]{}, fmt.Errorf("%w: %s holds predictions of another kind (%v)", ErrOtherPredictions, path, err)
	}
	return p, nil
}
