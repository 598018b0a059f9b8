package intent

import "github.com/ragd/ragd/classify"

// Evaluate runs the shipped classifier on labelled rows and returns two reports: raw, the
// model's most probable intent, and the pipeline's, as ragd serve uses it: a first turn is
// new-topic, Classify's new-topic guard applies, and an answer under threshold counts as
// drill-down (ask.Config.IntentThreshold).
func Evaluate(rows []Example, threshold float64) (raw, fallback classify.Report, err error) {
	labels := make([]string, len(Labels))
	for i, l := range Labels {
		labels[i] = string(l)
	}
	rawPred, pipePred := predictRows(rows, threshold)
	gold := make([]string, len(rows))
	rp, pp := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		gold[i], rp[i], pp[i] = string(r.Intent), string(rawPred[i]), string(pipePred[i])
	}
	if raw, err = classify.Evaluate(labels, gold, rp); err != nil {
		return raw, fallback, err
	}
	fallback, err = classify.Evaluate(labels, gold, pp)
	return raw, fallback, err
}

// EvaluateNewTopic scores the same two ways as Evaluate with the figures that matter for
// new-topic, the intent that drops every carried source: accuracy, the false new-topic rate and
// new-topic recall, with intervals that resample conversations.
func EvaluateNewTopic(rows []Example, threshold float64) (raw, pipeline Score) {
	rawPred, pipePred := predictRows(rows, threshold)
	return ScoreLabels(rows, rawPred), ScoreLabels(rows, pipePred)
}

// predictRows returns the shipped model's raw intents of the rows and the pipeline's.
func predictRows(rows []Example, threshold float64) (raw, pipeline []Label) {
	raw, pipeline = make([]Label, len(rows)), make([]Label, len(rows))
	for i, r := range rows {
		t := Turn{Text: r.Text, History: r.History}
		raw[i] = predict(model(), t).Label
		res := Classify(t)
		pipeline[i] = res.Label
		if res.Confidence < threshold {
			pipeline[i] = DrillDown
		}
	}
	return raw, pipeline
}
