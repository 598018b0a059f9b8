package intent

import "github.com/ragd/ragd/classify"

// Evaluate runs the shipped classifier on labelled rows as the pipeline does (a first turn is
// new-topic) and returns two reports: raw, and with the pipeline's fallback, where an answer
// under threshold counts as drill-down (ask.Config.IntentThreshold).
func Evaluate(rows []Example, threshold float64) (raw, fallback classify.Report, err error) {
	labels := make([]string, len(Labels))
	for i, l := range Labels {
		labels[i] = string(l)
	}
	gold := make([]string, len(rows))
	rawPred := make([]string, len(rows))
	fbPred := make([]string, len(rows))
	for i, r := range rows {
		res := Classify(Turn{Text: r.Text, History: r.History})
		gold[i], rawPred[i], fbPred[i] = string(r.Intent), string(res.Label), string(res.Label)
		if res.Confidence < threshold {
			fbPred[i] = string(DrillDown)
		}
	}
	if raw, err = classify.Evaluate(labels, gold, rawPred); err != nil {
		return raw, fallback, err
	}
	fallback, err = classify.Evaluate(labels, gold, fbPred)
	return raw, fallback, err
}
