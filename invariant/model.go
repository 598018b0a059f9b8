package invariant

import "math"

// classes are the labels of the clause model: no invariant, then the types in priority order.
var classes = [...]Type{"", Safety, Correction, Constraint, Blocking}

// model is a multinomial logistic regression over the cue vector of a clause, restricted to the
// clause's candidate classes. It is the part of the detector that is learned: the candidate
// rules say which types a clause could be, the weights say which it is when the rules allow
// more than one, or none at all.
type model struct {
	// w[k][j] is the weight of feature j (a cue, or the bias last) for class k.
	w [len(classes)][]float64
}

// modelOf builds the model from weights keyed by cue name ("bias" for the constant), the form
// in which weights.go stores them. A cue without a weight weighs nothing.
func modelOf(weights map[string][len(classes)]float64) model {
	var m model
	for k := range classes {
		m.w[k] = make([]float64, len(cues)+1)
		for j, c := range cues {
			m.w[k][j] = weights[c.name][k]
		}
		m.w[k][len(cues)] = weights["bias"][k]
	}
	return m
}

// weights returns the model's weights keyed by cue name, the inverse of modelOf.
func (m model) weights() map[string][len(classes)]float64 {
	out := make(map[string][len(classes)]float64, len(cues)+1)
	for j := range len(cues) + 1 {
		name := "bias"
		if j < len(cues) {
			name = cues[j].name
		}
		var w [len(classes)]float64
		for k := range classes {
			w[k] = m.w[k][j]
		}
		out[name] = w
	}
	return out
}

// instance is one clause as the model sees it: its cue vector and the classes it may take.
type instance struct {
	x       []float64
	allowed [len(classes)]bool
}

// probs returns the probability of each class for the instance; classes it may not take have
// probability 0.
func (m model) probs(in instance) [len(classes)]float64 {
	var p [len(classes)]float64
	top := math.Inf(-1)
	for k := range classes {
		if !in.allowed[k] {
			continue
		}
		for j, xj := range in.x {
			p[k] += m.w[k][j] * xj
		}
		top = max(top, p[k])
	}
	var sum float64
	for k := range p {
		if !in.allowed[k] {
			p[k] = 0
			continue
		}
		p[k] = math.Exp(p[k] - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// Training settings. The features are few and binary, so plain full-batch gradient descent
// converges well inside the step budget; being full-batch and free of random draws, training
// is deterministic, and weights.go can be checked against a fresh run.
const (
	trainSteps = 3000
	trainRate  = 0.5
	// trainL2 was chosen by cross-validation on folds 0-3 (see TestReport) among 0.001, 0.003,
	// 0.01, 0.03, 0.1 and 1: below 0.03 the weights fit the training folds and lost recall on
	// the others, above it nothing changed.
	trainL2 = 0.03
)

// train fits a model to instances xs with class indexes ys by minimising the mean
// cross-entropy over each instance's allowed classes, plus an L2 penalty (not on the bias).
// Instances whose class is not allowed are left out: the cue rules missed them, and no weight
// can bring them back.
func train(all []instance, ys []int) model {
	var xs []instance
	var keep []int
	for i, in := range all {
		if in.allowed[ys[i]] {
			xs, keep = append(xs, in), append(keep, ys[i])
		}
	}
	ys = keep
	var m model
	dim := len(cues) + 1
	for k := range classes {
		m.w[k] = make([]float64, dim)
	}
	if len(xs) == 0 {
		return m
	}
	var grad [len(classes)][]float64
	for k := range classes {
		grad[k] = make([]float64, dim)
	}
	n := float64(len(xs))
	for range trainSteps {
		for k := range classes {
			clear(grad[k])
		}
		for i, x := range xs {
			p := m.probs(x)
			for k := range classes {
				d := p[k]
				if k == ys[i] {
					d--
				}
				for j, xj := range x.x {
					grad[k][j] += d * xj
				}
			}
		}
		for k := range classes {
			for j := range dim {
				g := grad[k][j] / n
				if j < dim-1 {
					g += trainL2 * m.w[k][j]
				}
				m.w[k][j] -= trainRate * g
			}
		}
	}
	return m
}
