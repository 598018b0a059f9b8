// Package classify is the small text classifier behind the intent and mode packages: hashed
// word and character n-grams plus named features the caller computes, fed to a multinomial
// logistic regression trained deterministically with AdaGrad, with a softmax temperature fitted
// by cross-validation so that probabilities can be compared with a threshold.
//
// Models are saved as JSON holding only the hashed buckets seen in training, small enough to
// commit and embed. The package also has the evaluation helpers the training command prints:
// group-aware stratified folds, cross-validation, and per-label precision, recall and F1.
package classify
