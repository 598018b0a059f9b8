// Command ragd-train retrains the embedded turn-intent and interaction-mode models from the
// labelled data and prints how well they do:
//
//	go run ./cmd/ragd-train -task intent-data -data ../shared/data/labels -out intent/data/intent_extra.jsonl
//	go run ./cmd/ragd-train -task intent -data ../shared/data/labels -out intent/model.json
//	go run ./cmd/ragd-train -task mode -data ../shared/data/labels -out mode/model.json
//	go run ./cmd/ragd-train -task invariant-debugging -data ../shared/data/labels -out invariant/model_debugging.json
//	go run ./cmd/ragd-train -task invariant -data ../shared/data/labels -out invariant
//	go run ./cmd/ragd-train -task invariant-stability -data ../shared/data/labels -seeds 1,2,3,4
//	go run ./cmd/ragd-train -task invariant-compare -data ../shared/data/labels -options '{"l2":0.003}' -k 10
//	go run ./cmd/ragd-train -task invariant-perturbed -data ../shared/data/labels -k 10 -out /tmp/b.json
//	go run ./cmd/ragd-train -task invariant-compare -data ../shared/data/labels -against /tmp/b.json -k 10
//	go run ./cmd/ragd-train -task mode-compare -data ../shared/data/labels -options '{"l2":0.0003}' -k 10
//	go run ./cmd/ragd-train -task mode-perturbed -data ../shared/data/labels -k 10 -out /tmp/m.json
//	go run ./cmd/ragd-train -task mode-compare -data ../shared/data/labels -against /tmp/m.json -k 10
//
// The invariant models read their own mode model's P(DEBUGGING) (invariant.Debugging, options
// pinned in package invariant, not the shipped mode model's), so they are retrained after it, in
// a second run that embeds it (`go generate ./invariant` runs both).
//
// Training is deterministic: the same data gives the same model file, byte for byte, which is
// what `go generate ./intent ./mode` relies on. The report is group-aware stratified k-fold
// cross-validation on the training file. For modes, -dev also scores modes_dev.jsonl with the
// final model. It is off by default so that a run made while choosing features or
// hyperparameters never shows dev figures: dev is for the final before/after only.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ragd/ragd/classify"
	"github.com/ragd/ragd/intent"
	"github.com/ragd/ragd/invariant"
	"github.com/ragd/ragd/mode"
)

func main() {
	task := flag.String("task", "", "what to train: intent, mode, invariant-debugging (the invariant detector's own P(DEBUGGING) model) or invariant; or intent-data, to generate intent rows from the conversations beside -data into -out; or invariant-stability, to count the invariant decisions that change when a few training messages are left out; or invariant-perturbed, to write the detector's out-of-fold spans at -k perturbations of training to -out; or invariant-compare, to judge -options against the shipped options (or -against the spans of another tree) over -k perturbations of training; or mode-perturbed and mode-compare, the same for the mode model")
	data := flag.String("data", "../shared/data/labels", "directory of the labelled JSON Lines files")
	out := flag.String("out", "", "where to write the model (JSON), empty to only report; with -task invariant-perturbed or mode-perturbed, the predictions")
	folds := flag.Int("folds", 5, "cross-validation folds")
	seeds := flag.String("seeds", "1,2,3,4", "with -task invariant-stability, the seeds of the orders messages are left out in (one count each, and their sum)")
	options := flag.String("options", "{}", "with -task invariant-compare or mode-compare, the candidate's training options (with -task invariant-perturbed or mode-perturbed, the model's): JSON merged over the shipped ones (invariant.TrainOptions, mode.TrainOptions)")
	perturbations := flag.Int("k", 10, "with -task invariant-compare or mode-compare, how many perturbations of training (seeds 1..k, each fold's training without 5% of its messages) the candidate and the baseline are paired over; with -task invariant-perturbed or mode-perturbed, how many to write")
	against := flag.String("against", "", "with -task invariant-compare (mode-compare), the baseline's predictions, written by -task invariant-perturbed (mode-perturbed) possibly in another tree, with other code or data, instead of this tree's model with the shipped options; the scored rows, -k and -folds must be the same")
	dev := flag.Bool("dev", false, "with -task mode, also score modes_dev.jsonl with the final model (for the final check only: never while choosing features or hyperparameters)")
	flag.Parse()
	var set []string
	flag.Visit(func(f *flag.Flag) { set = append(set, f.Name) })
	if err := checkFlags(*task, set); err != nil {
		fmt.Fprintln(os.Stderr, "ragd-train:", err)
		os.Exit(2)
	}

	var err error
	switch *task {
	case "intent":
		err = trainIntent(os.Stdout, *data, *out, *folds)
	case "mode":
		err = trainMode(os.Stdout, *data, *out, *folds, *dev)
	case "invariant-debugging":
		err = trainInvariantDebugging(os.Stdout, *data, *out)
	case "invariant":
		err = trainInvariant(os.Stdout, *data, *out, *folds)
	case "invariant-stability":
		err = invariantStability(os.Stdout, *data, *seeds)
	case "invariant-perturbed":
		err = invariantPerturbed(os.Stdout, os.Stderr, *data, *options, *perturbations, *folds, *out)
	case "invariant-compare":
		err = invariantCompare(os.Stdout, os.Stderr, *data, *options, *against, *perturbations, *folds)
	case "mode-perturbed":
		err = modePerturbed(os.Stdout, os.Stderr, *data, *options, *perturbations, *folds, *out)
	case "mode-compare":
		err = modeCompare(os.Stdout, os.Stderr, *data, *options, *against, *perturbations, *folds)
	case "intent-data":
		if *out == "" {
			err = fmt.Errorf("-task intent-data needs -out, the JSON Lines file to write")
			break
		}
		err = generateIntentRows(os.Stdout, filepath.Dir(filepath.Clean(*data)), *out, defaultIntentSources)
	default:
		err = fmt.Errorf("-task must be intent, mode, invariant-debugging, invariant, intent-data, invariant-stability, invariant-perturbed, invariant-compare, mode-perturbed or mode-compare, not %q", *task)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ragd-train:", err)
		os.Exit(1)
	}
}

// flagTasks names, for each flag that only some tasks read, those tasks: a flag set for a task
// that ignores it would look as if it had been applied.
var flagTasks = map[string][]string{
	"out":     {"intent", "mode", "invariant-debugging", "invariant", "intent-data", "invariant-perturbed", "mode-perturbed"},
	"folds":   {"intent", "mode", "invariant", "invariant-perturbed", "invariant-compare", "mode-perturbed", "mode-compare"},
	"seeds":   {"invariant-stability"},
	"options": {"invariant-perturbed", "invariant-compare", "mode-perturbed", "mode-compare"},
	"k":       {"invariant-perturbed", "invariant-compare", "mode-perturbed", "mode-compare"},
	"against": {"invariant-compare", "mode-compare"},
	"dev":     {"mode"},
}

// checkFlags reports a flag of set (the flags given on the command line) that task does not read.
func checkFlags(task string, set []string) error {
	for _, name := range set {
		tasks, ok := flagTasks[name]
		if ok && !slices.Contains(tasks, task) {
			return fmt.Errorf("-%s applies only to -task %s", name, strings.Join(tasks, ", "))
		}
	}
	return nil
}

// trainIntent reports grouped cross-validation of the intent classifier before and after the
// generated rows join the training data, raw and through the new-topic guard, then trains on
// intent_train.jsonl and the generated rows and writes the model.
func trainIntent(w io.Writer, data, out string, folds int) error {
	rows, err := intent.LoadExamples(filepath.Join(data, "intent_train.jsonl"))
	if err != nil {
		return err
	}
	extra, err := intent.LoadExamples(filepath.Join(packageDir(filepath.Dir(out), out, "intent"), intent.ExtraFile))
	if err != nil {
		return err
	}
	opts := intent.TrainOptions()
	all := append(slices.Clip(rows), extra...)
	var names []string
	var scores []intent.Score
	for _, withExtra := range []bool{false, true} {
		preds, err := intent.GroupedCV(rows, extra, withExtra, folds, opts)
		if err != nil {
			return err
		}
		raw := make([]intent.Label, len(preds))
		for i, p := range preds {
			raw[i] = intent.Label(p.Label)
		}
		guarded := intent.Guarded(all, preds)
		trained := "trained on intent_train.jsonl"
		if withExtra {
			trained += " + generated"
		}
		// Per class for both models: the shipped one is the second (+ generated).
		report, err := intent.EvaluatePredictions(preds[:len(rows)], rows)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "intent: grouped %d-fold cross-validation on intent_train.jsonl (%d rows), %s, raw\n\n", folds, len(rows), trained)
		if err := report.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, v := range []struct {
			name   string
			labels []intent.Label
		}{{"raw", raw}, {"guarded", guarded}} {
			names = append(names, trained+", "+v.name+", on intent_train.jsonl", trained+", "+v.name+", on generated")
			scores = append(scores, intent.ScoreLabels(rows, v.labels[:len(rows)]), intent.ScoreLabels(extra, v.labels[len(rows):]))
		}
	}
	fmt.Fprintf(w, "intent: the same grouped %d folds over intent_train.jsonl (%d rows) and %s (%d rows); 95%% intervals resample conversations\n\n",
		folds, len(rows), intent.ExtraFile, len(extra))
	if err := intent.WriteScores(w, names, scores); err != nil {
		return err
	}
	m, err := intent.Train(all, opts)
	if err != nil {
		return err
	}
	return save(w, m, out)
}

// trainMode reports grouped cross-validation on modes_train.jsonl (extra rows in training
// folds only), trains on both files and writes the model; with dev, it also scores
// modes_dev.jsonl with that model.
func trainMode(w io.Writer, data, out string, folds int, dev bool) error {
	train, err := mode.LoadExamples(filepath.Join(data, "modes_train.jsonl"))
	if err != nil {
		return err
	}
	extra, err := mode.LoadExamples(filepath.Join(packageDir(filepath.Dir(out), out, "mode"), "data", "modes_extra.jsonl"))
	if err != nil {
		return err
	}
	opts, cfg := mode.TrainOptions(), mode.DefaultConfig()
	preds, err := mode.CrossValidate(train, extra, folds, opts)
	if err != nil {
		return err
	}
	raw, thresholded, err := mode.EvaluatePredictions(preds, train, cfg)
	if err != nil {
		return err
	}
	if err := writeReports(w, fmt.Sprintf("grouped %d-fold cross-validation on modes_train.jsonl (%d rows; %d extra rows in training folds only)", folds, len(train), len(extra)), cfg, raw, thresholded); err != nil {
		return err
	}
	m, err := mode.Train(append(train, extra...), opts)
	if err != nil {
		return err
	}
	if dev {
		rows, err := mode.LoadExamples(filepath.Join(data, "modes_dev.jsonl"))
		if err != nil {
			return err
		}
		raw, thresholded, err = mode.Evaluate(m, rows, cfg)
		if err != nil {
			return err
		}
		if err := writeReports(w, fmt.Sprintf("modes_dev.jsonl (%d rows), model trained on modes_train.jsonl and the extra rows", len(rows)), cfg, raw, thresholded); err != nil {
			return err
		}
	}
	return save(w, m, out)
}

// trainInvariantDebugging trains the invariant detector's P(DEBUGGING) model (a mode model with
// the options pinned in package invariant) and writes it to out. Its cross-validation is
// -task invariant's out-of-fold file.
func trainInvariantDebugging(w io.Writer, data, out string) error {
	m, err := invariant.TrainDebugging(data, packageDir(filepath.Dir(out), out, "invariant"))
	if err != nil {
		return err
	}
	return save(w, m, out)
}

// trainInvariant reports grouped cross-validation over every labelled invariant file (the
// extra rows in training folds only), by file and pooled, trains on all of them and writes the
// five models into the directory out, after the out-of-fold P(DEBUGGING) of the P(DEBUGGING)
// model's training turns (invariant.OutOfFoldFile). The models read the embedded P(DEBUGGING)
// model's output, so retrain them after it (-task invariant-debugging) in a new run; without
// -out, the report reads the committed out-of-fold file and fails if it is stale.
func trainInvariant(w io.Writer, data, out string, folds int) error {
	dir := packageDir(out, out, "invariant")
	if out != "" {
		o, err := invariant.MeasureOutOfFold(data, dir, folds)
		if err != nil {
			return err
		}
		path := filepath.Join(out, invariant.OutOfFoldFile)
		if err := o.Save(path); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", path)
	}
	d, err := invariant.LoadData(data, dir)
	if err != nil {
		return err
	}
	opts := invariant.TrainOptions()
	all, spans, err := invariant.CrossValidate(d.Rows, d.Extra, folds, opts, d.Debugging)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "invariant: %d-fold grouped cross-validation (%d messages; %d extra rows in training folds only)\n",
		folds, len(d.Rows), len(d.Extra))
	for _, f := range invariant.RowFiles {
		var rows []invariant.Example
		got := map[string][]invariant.Span{}
		for i, ex := range d.Rows {
			if d.Files[i] == f {
				rows = append(rows, ex)
				got[ex.ID] = spans[i]
			}
		}
		fmt.Fprintf(w, "\n%s (%d messages)\n", f, len(rows))
		if err := invariant.EvaluateByID(rows, got).WriteText(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nall files\n")
	if err := all.WriteText(w); err != nil {
		return err
	}
	// The extra rows are most of the detector's new wording (safety rules in new domains,
	// failures without error words), and the rows above hold little of it: they are scored too,
	// in a second cross-validation where they sit in folds like the others.
	withExtra := append(slices.Clip(d.Rows), d.Extra...)
	_, spans, err = invariant.CrossValidate(withExtra, nil, folds, opts, d.Debugging)
	if err != nil {
		return err
	}
	got := map[string][]invariant.Span{}
	for i, ex := range d.Extra {
		got[ex.ID] = spans[len(d.Rows)+i]
	}
	fmt.Fprintf(w, "\ndata/invariants_extra.jsonl (%d messages), scored out-of-fold in a %d-fold cross-validation over every row\n", len(d.Extra), folds)
	if err := invariant.EvaluateByID(d.Extra, got).WriteText(w); err != nil {
		return err
	}
	m, err := invariant.Train(append(d.Rows, d.Extra...), opts, d.Debugging)
	if err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	for i, sm := range m.Parts() {
		if err := save(w, sm, filepath.Join(out, invariant.ModelFiles[i])); err != nil {
			return err
		}
	}
	return nil
}

// packageDir is the directory of the package whose extra rows are read: the one the model is
// written to, else (no -out: a report from the module root) the package's path.
// stabilityModels and stabilityLeaveOut: five models, each trained without a different 5% of
// the 913 messages (46).
const stabilityModels, stabilityLeaveOut = 5, 46

// invariantStability prints, per seed, how many clauses of every labelled message (the rows and
// the extra rows) the invariant models decide differently when trained without different
// messages (invariant.MeasureStability), and the sum over the seeds: one seed's count varies
// by about a fifth with the seed alone.
func invariantStability(w io.Writer, data, seeds string) error {
	d, err := invariant.LoadData(data, "invariant")
	if err != nil {
		return err
	}
	all := append(slices.Clip(d.Rows), d.Extra...)
	fmt.Fprintf(w, "invariant stability: %d models, each trained without a different %d of %d messages\n",
		stabilityModels, stabilityLeaveOut, len(all))
	var sum invariant.Stability
	for _, f := range strings.Split(seeds, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %q is not a seed", f)
		}
		st, err := invariant.MeasureStability(all, invariant.TrainOptions(), d.Debugging, stabilityModels, stabilityLeaveOut, seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "seed %d: %d of %d clauses decided differently, %d messages with different spans\n", seed, st.Flips, st.Clauses, st.Messages)
		sum.Flips, sum.Messages = sum.Flips+st.Flips, sum.Messages+st.Messages
	}
	fmt.Fprintf(w, "sum over the seeds: %d clauses, %d messages\n", sum.Flips, sum.Messages)
	return nil
}

// invariantPerturbed writes to out the out-of-fold spans of the detector trained with options
// (merged over the shipped ones) at k perturbations of training (invariant.Perturbed), for
// -task invariant-compare -against in another tree.
func invariantPerturbed(w, progress io.Writer, data, options string, k, folds int, out string) error {
	if out == "" {
		return fmt.Errorf("-task invariant-perturbed needs -out, the file to write the predictions to")
	}
	if k < 1 {
		return fmt.Errorf("-k must be at least 1, not %d", k)
	}
	opts, err := mergeOptions(invariant.TrainOptions(), options)
	if err != nil {
		return err
	}
	d, err := invariant.LoadData(data, "invariant")
	if err != nil {
		return err
	}
	p, err := invariant.Perturbed(d, opts, k, folds, func(done int) {
		fmt.Fprintf(progress, "invariant perturbed: perturbation %d of %d done\n", done, k)
	})
	if err != nil {
		return err
	}
	if err := p.Save(out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "wrote %s: out-of-fold spans of %d rows and %d extra rows at %d perturbations of %d-fold cross-validations, options %s\n",
		out, len(d.Rows), len(d.Extra), k, folds, marshal(opts))
	return err
}

// invariantCompare prints the baseline B and the candidate C, this tree's detector with options
// merged over the shipped ones, paired over k perturbations of training (invariant.Compare): per
// metric the K-means of both, the mean difference with the per-k differences, and the paired
// bootstrap intervals of the typed micro-F1 difference and of the safety spans found on the
// extra rows. B is this tree's detector with the shipped options, or, with against, the
// predictions -task invariant-perturbed wrote in another tree.
func invariantCompare(w, progress io.Writer, data, options, against string, k, folds int) error {
	if k < 1 {
		return fmt.Errorf("-k must be at least 1, not %d", k)
	}
	cand, err := mergeOptions(invariant.TrainOptions(), options)
	if err != nil {
		return err
	}
	d, err := invariant.LoadData(data, "invariant")
	if err != nil {
		return err
	}
	var base invariant.Predictions
	b := "the shipped options B"
	if against != "" {
		if base, err = loadAgainst(against, d, k, folds); err != nil {
			return err
		}
		b = fmt.Sprintf("B, the predictions of %s (options %s)", against, marshal(base.Options))
	}
	fmt.Fprintf(w, "invariant compare: candidate C (%s) against %s, paired over %d perturbations of training\n", marshal(cand), b, k)
	fmt.Fprintf(w, "(seeds 1..%d: each fold's training set without whole conversations, at least 5%% of its messages, the same for B and C);\n", k)
	fmt.Fprintf(w, "%d-fold grouped cross-validations: 619 = %d rows scored (%d extra rows train only), 913all = all %d rows in folds, extra = its %d extra rows\n\n",
		folds, len(d.Rows), len(d.Extra), len(d.Rows)+len(d.Extra), len(d.Extra))
	run := func(name string, opts classify.Options) (invariant.Predictions, error) {
		return invariant.Perturbed(d, opts, k, folds, func(done int) {
			fmt.Fprintf(progress, "invariant compare: %s perturbation %d of %d done\n", name, done, k)
		})
	}
	if against == "" {
		if base, err = run("B", invariant.TrainOptions()); err != nil {
			return err
		}
	}
	c, err := run("C", cand)
	if err != nil {
		return err
	}
	res, err := invariant.Compare(d, base, c)
	if err != nil {
		return err
	}
	names, counts := make([]string, len(invariant.Metrics)), make([]bool, len(invariant.Metrics))
	for m, metric := range invariant.Metrics {
		names[m], counts[m] = metric.Name, metric.Count
	}
	if err := writeRuns(w, res.Runs, names, counts); err != nil {
		return err
	}
	micro := slices.IndexFunc(invariant.Metrics, func(m invariant.Metric) bool { return m.Name == "typed micro-F1 913all" })
	_, err = fmt.Fprintf(w, "\ntyped micro-F1 913all, C - B: %+.4f, 95%% paired bootstrap interval [%+.4f, %+.4f] (2000 resamples of the %d messages, each the mean over k)\n",
		res.Mean(res.Cand, micro)-res.Mean(res.Base, micro), res.MicroF1Diff.Lo, res.MicroF1Diff.Hi, len(d.Rows)+len(d.Extra))
	if err != nil {
		return err
	}
	safety := slices.IndexFunc(invariant.Metrics, func(m invariant.Metric) bool { return m.Name == "safety spans extra" })
	_, err = fmt.Fprintf(w, "safety spans extra, C - B: %+.2f, 95%% paired bootstrap interval [%+.2f, %+.2f] (2000 resamples of the %d extra messages, each the mean over k)\n",
		res.Mean(res.Cand, safety)-res.Mean(res.Base, safety), res.SafetyExtraDiff.Lo, res.SafetyExtraDiff.Hi, len(d.Extra))
	return err
}

// writeRuns prints, per metric (names; counts are printed with one decimal, ratios with four),
// B's and C's means over k, the mean difference and the per-k differences.
func writeRuns(w io.Writer, r classify.Runs, names []string, counts []bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tB mean\tC mean\tC - B\tper k\t")
	for m, name := range names {
		val, diff := "%.4f", "%+.4f"
		if counts[m] {
			val, diff = "%.1f", "%+.1f"
		}
		var perK []string
		for _, x := range r.Diffs(m) {
			perK = append(perK, strings.TrimSuffix(fmt.Sprintf(diff, x), ".0"))
		}
		fmt.Fprintf(tw, "%s\t"+val+"\t"+val+"\t"+diff+"\t%s\t\n", name, r.Mean(r.Base, m), r.Mean(r.Cand, m),
			r.Mean(r.Cand, m)-r.Mean(r.Base, m), strings.Join(perK, " "))
	}
	return tw.Flush()
}

// modeRows reads the mode model's scored rows (modes_train.jsonl in data) and its extra rows.
func modeRows(data string) (rows, extra []mode.Example, err error) {
	if rows, err = mode.LoadExamples(filepath.Join(data, "modes_train.jsonl")); err != nil {
		return nil, nil, err
	}
	if extra, err = mode.LoadExamples(filepath.Join("mode", "data", "modes_extra.jsonl")); err != nil {
		return nil, nil, err
	}
	return rows, extra, nil
}

// modePerturbed writes to out the out-of-fold predictions of the mode model trained with
// options (merged over the shipped ones) at k perturbations of training (mode.Perturbed), for
// -task mode-compare -against in another tree.
func modePerturbed(w, progress io.Writer, data, options string, k, folds int, out string) error {
	if out == "" {
		return fmt.Errorf("-task mode-perturbed needs -out, the file to write the predictions to")
	}
	if k < 1 {
		return fmt.Errorf("-k must be at least 1, not %d", k)
	}
	opts, err := mergeOptions(mode.TrainOptions(), options)
	if err != nil {
		return err
	}
	rows, extra, err := modeRows(data)
	if err != nil {
		return err
	}
	p, err := mode.Perturbed(rows, extra, opts, k, folds, func(done int) {
		fmt.Fprintf(progress, "mode perturbed: perturbation %d of %d done\n", done, k)
	})
	if err != nil {
		return err
	}
	if err := p.Save(out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "wrote %s: out-of-fold predictions of %d rows (%d extra rows in training folds only) at %d perturbations of %d-fold cross-validations, options %s\n",
		out, len(rows), len(extra), k, folds, marshal(opts))
	return err
}

// modeCompare prints the baseline B and the candidate C, this tree's mode model with options
// merged over the shipped ones, paired over k perturbations of training (mode.Compare): per
// metric the K-means of both, the mean difference with the per-k differences, and the paired
// bootstrap intervals of the macro-F1 difference, raw and with the fallback. B is this tree's
// model with the shipped options, or, with against, the predictions -task mode-perturbed wrote
// in another tree.
func modeCompare(w, progress io.Writer, data, options, against string, k, folds int) error {
	if k < 1 {
		return fmt.Errorf("-k must be at least 1, not %d", k)
	}
	cand, err := mergeOptions(mode.TrainOptions(), options)
	if err != nil {
		return err
	}
	rows, extra, err := modeRows(data)
	if err != nil {
		return err
	}
	var base mode.Predictions
	b := "the shipped options B"
	if against != "" {
		if base, err = mode.LoadPredictions(against, rows, k, folds); err != nil {
			return fmt.Errorf("-against %s: %w", against, err)
		}
		b = fmt.Sprintf("B, the predictions of %s (options %s)", against, marshal(base.Options))
	}
	cfg := mode.DefaultConfig()
	fmt.Fprintf(w, "mode compare: candidate C (%s) against %s, paired over %d perturbations of training\n", marshal(cand), b, k)
	fmt.Fprintf(w, "(seeds 1..%d: each fold's training set without whole groups, at least 5%% of its rows, the same for B and C);\n", k)
	fmt.Fprintf(w, "grouped %d-fold cross-validations on modes_train.jsonl (%d rows; %d extra rows in training folds only); thresholded: confidence < %.2f counts as GENERAL\n\n",
		folds, len(rows), len(extra), cfg.Threshold)
	run := func(name string, opts classify.Options) (mode.Predictions, error) {
		return mode.Perturbed(rows, extra, opts, k, folds, func(done int) {
			fmt.Fprintf(progress, "mode compare: %s perturbation %d of %d done\n", name, done, k)
		})
	}
	if against == "" {
		if base, err = run("B", mode.TrainOptions()); err != nil {
			return err
		}
	}
	c, err := run("C", cand)
	if err != nil {
		return err
	}
	res, err := mode.Compare(rows, base, c, cfg)
	if err != nil {
		return err
	}
	names := make([]string, len(mode.Metrics))
	for m, metric := range mode.Metrics {
		names[m] = metric.Name
	}
	if err := writeRuns(w, res.Runs, names, make([]bool, len(names))); err != nil {
		return err
	}
	macro := slices.IndexFunc(mode.Metrics, func(m mode.Metric) bool { return m.Name == "raw macro-F1" })
	_, err = fmt.Fprintf(w, "\nraw macro-F1, C - B: %+.4f, 95%% paired bootstrap interval [%+.4f, %+.4f] (2000 resamples of the %d turns, each the mean over k)\n",
		res.Mean(res.Cand, macro)-res.Mean(res.Base, macro), res.MacroF1Diff.Lo, res.MacroF1Diff.Hi, len(rows))
	if err != nil {
		return err
	}
	thr := slices.IndexFunc(mode.Metrics, func(m mode.Metric) bool { return m.Name == "thresholded macro-F1" })
	_, err = fmt.Fprintf(w, "thresholded macro-F1, C - B: %+.4f, 95%% paired bootstrap interval [%+.4f, %+.4f] (the same resamples)\n",
		res.Mean(res.Cand, thr)-res.Mean(res.Base, thr), res.ThresholdedMacroF1Diff.Lo, res.ThresholdedMacroF1Diff.Hi)
	return err
}

// loadAgainst reads the baseline's predictions of -against and checks that they pair with d at
// k perturbations of folds folds: other invariant rows, K or folds are an error naming the flag.
// Other mode data or models are not: they change the detector, not the messages it is scored on.
func loadAgainst(path string, d invariant.Data, k, folds int) (invariant.Predictions, error) {
	p, err := invariant.LoadPredictions(path, d, k, folds)
	if err != nil {
		return invariant.Predictions{}, fmt.Errorf("-against %s: %w", path, err)
	}
	return p, nil
}

// marshal is opts as the JSON that -options takes.
func marshal(opts classify.Options) string {
	b, err := json.Marshal(opts)
	if err != nil {
		// classify.Options holds numbers and booleans only.
		panic(err)
	}
	return string(b)
}

// mergeOptions returns base with the JSON object options merged over it; a field classify.Options
// does not have is an error, so a misspelt option cannot silently compare B with itself.
func mergeOptions(base classify.Options, options string) (classify.Options, error) {
	dec := json.NewDecoder(strings.NewReader(options))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&base); err != nil {
		return classify.Options{}, fmt.Errorf("-options: %w", err)
	}
	if dec.More() {
		return classify.Options{}, fmt.Errorf("-options: more than one JSON value")
	}
	return base, nil
}

func packageDir(dir, out, pkg string) string {
	if out != "" {
		return dir
	}
	return pkg
}

func writeReports(w io.Writer, title string, cfg mode.Config, raw, thresholded classify.Report) error {
	fmt.Fprintf(w, "mode: %s\n\nraw classifier (most probable mode):\n", title)
	if err := raw.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nthresholded (confidence < %.2f counts as GENERAL):\n", cfg.Threshold)
	if err := thresholded.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func save(w io.Writer, m *classify.Model, out string) error {
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmodel: temperature %.4g, %d bytes\n", m.Temperature(), buf.Len())
	if out == "" {
		return nil
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}
