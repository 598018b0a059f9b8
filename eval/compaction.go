package eval

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ragd/ragd"
	"github.com/ragd/ragd/ask"
	"github.com/ragd/ragd/bundle"
	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/invariant"
)

// CompactionConfig says how ReplayCompaction replays dialogues.
type CompactionConfig struct {
	// Intent classifies each user turn, as /v1/ask does; nil replays without a classifier.
	Intent ask.IntentClassifier
	// Boundaries decides goal boundaries (compact.Shift when nil).
	Boundaries compact.Detector
	// Compact sizes the strategies: sliding-window's messages, capsules' tokens. Its
	// BudgetTokens is token-budget's budget unless BudgetMatched.
	Compact compact.Config
	// BudgetMatched gives token-budget the matched budget: the sliding window's token size that
	// matches goal-boundary's mean tokens.
	BudgetMatched bool
	// Budgets are the bundle's section budgets (the GENERAL mode's in ragd eval compaction).
	Budgets bundle.Budgets
	// Progress is called once per dialogue replayed, for a progress bar; may be nil.
	Progress func()
}

// CompactionReport is the result of ragd eval compaction.
type CompactionReport struct {
	Dataset    string              `json:"dataset"`
	Dialogues  int                 `json:"dialogues"`
	MultiGoal  int                 `json:"multi_goal_dialogues"`
	SingleGoal int                 `json:"single_goal_dialogues"`
	UserTurns  int                 `json:"user_turns"`
	Boundary   BoundaryScore       `json:"boundary"`
	Strategies []StrategyResult    `json:"strategies"`
	Matched    MatchedComparison   `json:"matched"`
	Cost       ReplayCost          `json:"cost"`
	Hypotheses map[string]Verdict  `json:"hypotheses"`
	Slots      map[string]SlotLoss `json:"lost_slots,omitempty"` // goal-boundary's misses by slot, end of dialogue
	Notes      []string            `json:"notes,omitempty"`
}

// BoundaryScore compares the detected goal boundaries with those of the data.
type BoundaryScore struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Gold      int     `json:"gold"`
	Predicted int     `json:"predicted"`
	// Within1 scores a detected boundary one user turn early or late as a hit.
	Within1 struct {
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		F1        float64 `json:"f1"`
	} `json:"within_one_turn"`
}

// StrategyResult is one strategy's figures. Token reduction is against full context over the
// same user turns; retention is the share of the goals' belief-state values findable in the
// full context that are findable in the strategy's context too.
type StrategyResult struct {
	Name string `json:"name"`
	Size string `json:"size,omitempty"`
	// TokensPerTurn is the mean context tokens per user turn, by dialogue kind.
	TokensPerTurnSingleGoal float64    `json:"tokens_per_turn_single_goal"`
	TokensPerTurnMultiGoal  float64    `json:"tokens_per_turn_multi_goal"`
	TokenReductionSingle    float64    `json:"token_reduction_single_goal"`
	TokenReductionMulti     float64    `json:"token_reduction_multi_goal"`
	TokenReductionMultiCI   [2]float64 `json:"token_reduction_multi_goal_ci95"`
	// TokenReductionLaterGoals is the reduction over the user turns of multi-goal dialogues from
	// the start of their second goal (by the data) on: the turns where a finished goal exists.
	TokenReductionLaterGoals float64 `json:"token_reduction_later_goals"`
	// TokenReductionEndMulti is the reduction of the context at the end of multi-goal
	// dialogues (after the last message), where every finished goal can be compacted.
	TokenReductionEndMulti float64 `json:"token_reduction_end_multi_goal"`
	// RetentionMulti is at the end of multi-goal dialogues, over every goal's values.
	RetentionMulti   float64    `json:"retention_multi_goal"`
	RetentionMultiCI [2]float64 `json:"retention_multi_goal_ci95"`
	// RetentionEndOfGoal is at the first turn of the next goal, over the finished goal's values.
	RetentionEndOfGoal float64 `json:"retention_end_of_goal"`
	RetentionSingle    float64 `json:"retention_single_goal"`
	// Efficiency is token_reduction / (1 + accuracy_drop) on multi-goal dialogues, the drop
	// being 1 - retention.
	Efficiency float64 `json:"efficiency"`
	// Capsules is the mean number of capsules in the final context of multi-goal dialogues.
	Capsules float64 `json:"capsules_multi_goal"`
}

// MatchedComparison compares goal-boundary with a sliding window sized in tokens so that its
// mean context tokens per user turn on multi-goal dialogues match goal-boundary's.
type MatchedComparison struct {
	WindowTokens          int            `json:"window_tokens"`
	SlidingWindow         StrategyResult `json:"sliding_window"`
	RetentionDifference   float64        `json:"retention_difference"` // goal-boundary minus sliding window
	RetentionDifferenceCI [2]float64     `json:"retention_difference_ci95"`
}

// ReplayCost is how long the replay took.
type ReplayCost struct {
	Seconds            float64 `json:"seconds"`
	DialoguesPerSecond float64 `json:"dialogues_per_second"`
	// ReplaysPerSecond is dialogue replays through one strategy per second: what replaying a
	// dialogue costs, decisions excluded.
	ReplaysPerSecond float64 `json:"replays_per_second"`
	// Replays counts dialogue replays: every strategy, and the calibration of the matched
	// window, replays every dialogue.
	Replays int `json:"replays"`
}

// Verdict says whether a hypothesis held.
type Verdict struct {
	Held   bool   `json:"held"`
	Reason string `json:"reason"`
}

// SlotLoss counts one slot's values that goal-boundary lost at the end of dialogues.
type SlotLoss struct {
	Findable int `json:"findable"`
	Lost     int `json:"lost"`
}

// dialogueTurn is one user turn of a replay, the same for every strategy: what the turn
// pipeline decided and recorded before building the bundle.
type dialogueTurn struct {
	index   int // in the dialogue's messages
	number  int
	text    string
	spans   []invariant.Span
	start   bool
	history []ragd.Message // the messages before the turn
	caps    []ragd.Capsule // the capsules of the goals finished by the turn
}

// prepared is a dialogue with its turns decided.
type prepared struct {
	d         WOZDialogue
	turns     []dialogueTurn
	all       []ragd.Message // every message, for the context at the end
	caps      []ragd.Capsule // every finished goal's capsule
	predicted []int          // message indexes of detected boundaries
}

// prepare replays the turn pipeline's decisions for d: each user message is classified and
// tested for a goal boundary as /v1/ask does, the capsules of the goals it finishes are made,
// and the assistant's message is recorded as the reply a chat UI showed.
func prepare(d WOZDialogue, cfg CompactionConfig) prepared {
	p := prepared{d: d}
	reply := time.Unix(0, 0)
	var history []string
	for i, m := range d.Messages {
		number := i/2 + 1
		if m.Role == "assistant" {
			p.all = append(p.all, ragd.Message{Turn: number, Role: "assistant", Content: m.Text, ReplyRecordedAt: &reply})
			continue
		}
		var in ask.Intent
		if cfg.Intent != nil {
			in = cfg.Intent.Classify(ask.IntentInput{Text: m.Text, History: history})
		}
		b := ask.GoalBoundary(cfg.Boundaries, p.all, m.Text, in, cfg.Intent != nil)
		// Kept as the turn pipeline keeps them: none found is an empty list, not "not looked".
		spans := append([]invariant.Span{}, invariant.Detect(m.Text)...)
		t := dialogueTurn{index: i, number: number, text: m.Text, spans: spans, start: b.New && number > 1,
			history: slices.Clone(p.all)}
		if t.start {
			p.predicted = append(p.predicted, i)
		}
		msgs := append(ask.Messages(p.all), compact.Message{Turn: number, Role: "user", Text: m.Text, GoalStart: t.start})
		p.caps = append(p.caps, ask.NewCapsules(msgs, p.caps, nil, cfg.Compact.CapsuleTokens)...)
		t.caps = slices.Clone(p.caps)
		p.turns = append(p.turns, t)
		p.all = append(p.all, ragd.Message{Turn: number, Role: "user", Content: m.Text,
			Meta: map[string]any{"goal_start": t.start, "invariants": t.spans}})
		history = append(history, m.Text)
	}
	return p
}

// contexts are one strategy's contexts of a dialogue: tokens per user turn, the rendered text
// at each user turn and at the end.
type contexts struct {
	tokens []int
	texts  []string
	end    string
	endTok int
	caps   int // capsules in the context at the end
}

// replay builds every context of p with strategy s, with the function /v1/ask builds them with.
func replay(p prepared, s compact.Strategy, cfg CompactionConfig) contexts {
	var c contexts
	build := func(h ask.History, t ask.TurnContext) bundle.Bundle {
		in := ask.ContextInput(h, t)
		in.Mode, in.Budgets = "GENERAL", cfg.Budgets
		return bundle.Build(in)
	}
	for _, t := range p.turns {
		b := build(ask.History{Messages: t.history, Capsules: t.caps},
			ask.TurnContext{Number: t.number, Message: t.text, Spans: t.spans, GoalStart: t.start, Strategy: s})
		c.tokens = append(c.tokens, b.UsedTokens)
		c.texts = append(c.texts, b.Text)
	}
	end := build(ask.History{Messages: p.all, Capsules: p.caps}, ask.TurnContext{Strategy: s})
	c.end, c.endTok = end.Text, end.UsedTokens
	for _, sec := range end.Sections {
		if sec.Name == bundle.Capsules {
			c.caps = len(sec.Items)
		}
	}
	return c
}

// dialogueScore is one strategy's counts on one dialogue.
type dialogueScore struct {
	tokens, full, turns     int // context tokens over the user turns, the strategy's and full context's
	endTokens, endFull      int // context tokens at the end
	laterTokens, laterFull  int // context tokens over the user turns of the second goal on
	goalFound, goalFindable int // end of each goal
	endFound, endFindable   int // end of the dialogue
	caps                    int
	lost, findable          map[string]int // by slot, end of dialogue
}

// scoreOf compares a strategy's contexts with full context's on one dialogue.
func scoreOf(p prepared, c, full contexts) dialogueScore {
	s := dialogueScore{caps: c.caps, turns: len(c.tokens), lost: map[string]int{}, findable: map[string]int{}}
	s.endTokens, s.endFull = c.endTok, full.endTok
	for i := range c.tokens {
		s.tokens += c.tokens[i]
		s.full += full.tokens[i]
		if len(p.d.Goals) > 1 && p.turns[i].index >= p.d.Goals[1].Start {
			s.laterTokens += c.tokens[i]
			s.laterFull += full.tokens[i]
		}
	}
	check := func(values map[string]string, text, reference string, found, findable *int, bySlot bool) {
		norm, ref := normalizeValue(text), normalizeValue(reference)
		for _, slot := range slices.Sorted(maps.Keys(values)) {
			v := " " + strings.TrimPrefix(strings.TrimSpace(normalizeValue(values[slot])), "the ") + " "
			if strings.TrimSpace(v) == "" || !strings.Contains(ref, v) {
				continue
			}
			*findable++
			ok := strings.Contains(norm, v)
			if ok {
				*found++
			}
			if bySlot {
				s.findable[slot]++
				if !ok {
					s.lost[slot]++
				}
			}
		}
	}
	for g, goal := range p.d.Goals {
		if g+1 < len(p.d.Goals) {
			// The end of a goal is the first user turn of the next one.
			at := slices.IndexFunc(p.turns, func(t dialogueTurn) bool { return t.index == p.d.Goals[g+1].Start })
			if at >= 0 {
				check(goal.Values, c.texts[at], full.texts[at], &s.goalFound, &s.goalFindable, false)
			}
		} else {
			check(goal.Values, c.end, full.end, &s.goalFound, &s.goalFindable, false)
		}
		check(goal.Values, c.end, full.end, &s.endFound, &s.endFindable, true)
	}
	return s
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9:]+`)

// normalizeValue lower-cases text, joins a split possessive ("rosa 's" is "rosas", as "rosa's"
// is) and turns everything but letters, digits and colons into single spaces, with a space at
// both ends so that a value is found only as whole words.
func normalizeValue(s string) string {
	s = strings.ToLower(s)
	s = strings.ReplaceAll(s, " '", "'")
	s = strings.ReplaceAll(s, "'", "")
	return " " + strings.TrimSpace(nonAlnum.ReplaceAllString(s, " ")) + " "
}

// ReplayCompaction replays dialogues through each compaction strategy and scores them.
func ReplayCompaction(name string, ds []WOZDialogue, cfg CompactionConfig) (*CompactionReport, error) {
	if cfg.Boundaries == nil {
		cfg.Boundaries = compact.Shift{}
	}
	if err := cfg.Compact.Validate(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	start := time.Now()
	rep := &CompactionReport{Dataset: name, Dialogues: len(ds), Hypotheses: map[string]Verdict{}}
	preps := make([]prepared, len(ds))
	everyone := make([]int, len(ds))
	for i := range everyone {
		everyone[i] = i
	}
	var mu sync.Mutex
	parallel(everyone, func(i int) {
		preps[i] = prepare(ds[i], cfg)
		if cfg.Progress != nil {
			mu.Lock()
			cfg.Progress()
			mu.Unlock()
		}
	})
	var multi []int
	for i, d := range ds {
		rep.UserTurns += len(preps[i].turns)
		if len(d.Goals) > 1 {
			multi = append(multi, i)
		}
	}
	rep.MultiGoal, rep.SingleGoal = len(multi), len(ds)-len(multi)
	replayStart := time.Now()
	rep.Boundary = scoreBoundaries(preps)

	// Full context is the reference of every score.
	fulls := make([]contexts, len(preps))
	parallel(everyone, func(i int) { fulls[i] = replay(preps[i], compact.FullContext{}, cfg) })
	run := func(s compact.Strategy, only []int) []dialogueScore {
		out := make([]dialogueScore, len(preps))
		parallel(only, func(i int) { out[i] = scoreOf(preps[i], replay(preps[i], s, cfg), fulls[i]) })
		rep.Cost.Replays += len(only)
		return out
	}
	fullScores := run(compact.FullContext{}, everyone)
	boundaryScores := run(compact.Boundaries{}, everyone)

	// The matched window: the smallest token window whose mean tokens per user turn on
	// multi-goal dialogues reach goal-boundary's.
	target := meanTokens(boundaryScores, multi)
	lo, hi := 1, 1
	for meanTokens(run(compact.Sliding{Tokens: hi}, multi), multi) < target {
		lo, hi = hi, hi*2
	}
	// Within 1% of the window is close enough: a token more or less moves no mean.
	for hi-lo > max(1, lo/100) {
		mid := (lo + hi) / 2
		if meanTokens(run(compact.Sliding{Tokens: mid}, multi), multi) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	window := hi
	budget := cfg.Compact.BudgetTokens
	if cfg.BudgetMatched {
		budget = window
	}

	results := map[string][]dialogueScore{compact.Full: fullScores, compact.GoalBoundary: boundaryScores}
	results[compact.SlidingWindow] = run(compact.Sliding{Messages: cfg.Compact.WindowMessages}, everyone)
	results[compact.TokenBudget] = run(compact.Budget{Tokens: budget}, everyone)
	matched := run(compact.Sliding{Tokens: window}, everyone)
	sizes := map[string]string{compact.SlidingWindow: fmt.Sprintf("%d messages", cfg.Compact.WindowMessages),
		compact.TokenBudget: fmt.Sprintf("%d tokens", budget)}
	for _, n := range compact.Names {
		r := summarize(n, results[n], multi, len(ds))
		r.Size = sizes[n]
		rep.Strategies = append(rep.Strategies, r)
	}
	rep.Matched.WindowTokens = window
	rep.Matched.SlidingWindow = summarize(compact.SlidingWindow, matched, multi, len(ds))
	rep.Matched.SlidingWindow.Size = fmt.Sprintf("%d tokens (matched)", window)
	rep.Matched.RetentionDifference = retention(boundaryScores, multi) - retention(matched, multi)
	rep.Matched.RetentionDifferenceCI = bootstrap(multi, func(idx []int) float64 {
		return retention(boundaryScores, idx) - retention(matched, idx)
	})
	rep.Slots = map[string]SlotLoss{}
	for _, i := range multi {
		for slot, n := range boundaryScores[i].findable {
			l := rep.Slots[slot]
			l.Findable += n
			l.Lost += boundaryScores[i].lost[slot]
			rep.Slots[slot] = l
		}
	}

	gb := rep.Strategies[slices.Index(compact.Names, compact.GoalBoundary)]
	red, ret := gb.TokenReductionMulti, gb.RetentionMulti
	rep.Hypotheses["h1"] = Verdict{Held: red >= 0.40 && red <= 0.60 && ret >= 0.95,
		Reason: fmt.Sprintf("goal-boundary on multi-goal dialogues: %.1f%% fewer context tokens per turn (95%% CI %.1f-%.1f; %.1f%% over the turns from the second goal on, %.1f%% at the end of the dialogues), retention %.3f (95%% CI %.3f-%.3f); the hypothesis is 40-60%% with retention >= 0.95",
			100*red, 100*gb.TokenReductionMultiCI[0], 100*gb.TokenReductionMultiCI[1], 100*gb.TokenReductionLaterGoals, 100*gb.TokenReductionEndMulti, ret, gb.RetentionMultiCI[0], gb.RetentionMultiCI[1])}
	d := rep.Matched
	rep.Hypotheses["h4"] = Verdict{Held: d.RetentionDifferenceCI[0] > 0,
		Reason: fmt.Sprintf("at matched tokens (%.0f vs %.0f per turn, window %d tokens) goal-boundary retains %.3f, the sliding window %.3f: difference %+.3f (95%% CI %+.3f to %+.3f)",
			gb.TokensPerTurnMultiGoal, d.SlidingWindow.TokensPerTurnMultiGoal, window, ret, d.SlidingWindow.RetentionMulti,
			d.RetentionDifference, d.RetentionDifferenceCI[0], d.RetentionDifferenceCI[1])}

	replaying := time.Since(replayStart)
	rep.Cost.Seconds = time.Since(start).Seconds()
	rep.Cost.DialoguesPerSecond = float64(len(ds)) / rep.Cost.Seconds
	rep.Cost.ReplaysPerSecond = float64(rep.Cost.Replays+len(ds)) / replaying.Seconds()
	rep.Notes = append(rep.Notes,
		"goal boundaries of the data: the user turn after which a domain not seen before first has belief-state slots; the first goal's start is not a boundary",
		"retention counts final belief-state values (yes/no, dontcare and none left out) findable in the full context at the same point, as whole words after lower-casing and dropping punctuation and a leading 'the'",
		"contexts are ragd's bundles with the GENERAL budgets and no evidence; tokens are cl100k over every section",
		"intervals are 95% percentile bootstraps over dialogues (1000 resamples)")
	return rep, nil
}

// parallel calls fn on every index, on as many goroutines as Go may run at once: every call is
// a pure function of its dialogue.
func parallel(idx []int, fn func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for _, i := range idx {
		next <- i
	}
	close(next)
	wg.Wait()
}

// summarize sums a strategy's scores.
func summarize(name string, scores []dialogueScore, multi []int, n int) StrategyResult {
	isMulti := make([]bool, n)
	for _, i := range multi {
		isMulti[i] = true
	}
	var single []int
	for i := range n {
		if !isMulti[i] {
			single = append(single, i)
		}
	}
	r := StrategyResult{Name: name,
		TokensPerTurnSingleGoal: meanTokens(scores, single), TokensPerTurnMultiGoal: meanTokens(scores, multi),
		TokenReductionSingle: reduction(scores, single), TokenReductionMulti: reduction(scores, multi),
		RetentionMulti: retention(scores, multi), RetentionSingle: retention(scores, single),
	}
	r.TokenReductionMultiCI = bootstrap(multi, func(idx []int) float64 { return reduction(scores, idx) })
	r.RetentionMultiCI = bootstrap(multi, func(idx []int) float64 { return retention(scores, idx) })
	r.TokenReductionLaterGoals = sum(scores, multi, func(s dialogueScore) (int, int) { return s.laterFull - s.laterTokens, s.laterFull })
	r.TokenReductionEndMulti = sum(scores, multi, func(s dialogueScore) (int, int) { return s.endFull - s.endTokens, s.endFull })
	r.RetentionEndOfGoal = sum(scores, multi, func(s dialogueScore) (int, int) { return s.goalFound, s.goalFindable })
	r.Capsules = sum(scores, multi, func(s dialogueScore) (int, int) { return s.caps, 1 })
	r.Efficiency = r.TokenReductionMulti / (1 + (1 - r.RetentionMulti))
	return r
}

// sum adds up two counts of the dialogues idx and returns their ratio (0 when the second is 0).
func sum(scores []dialogueScore, idx []int, counts func(dialogueScore) (int, int)) float64 {
	var a, b int
	for _, i := range idx {
		x, y := counts(scores[i])
		a, b = a+x, b+y
	}
	return ratio(a, b)
}

// meanTokens is the mean context tokens per user turn over the dialogues idx.
func meanTokens(scores []dialogueScore, idx []int) float64 {
	return sum(scores, idx, func(s dialogueScore) (int, int) { return s.tokens, s.turns })
}

// reduction is the share of full context's tokens a strategy saved over the user turns of idx.
func reduction(scores []dialogueScore, idx []int) float64 {
	return sum(scores, idx, func(s dialogueScore) (int, int) { return s.full - s.tokens, s.full })
}

// retention is the share of the values findable in full context at the end of the dialogues idx
// that the strategy's context holds too.
func retention(scores []dialogueScore, idx []int) float64 {
	return sum(scores, idx, func(s dialogueScore) (int, int) { return s.endFound, s.endFindable })
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// bootstrap returns the 95% percentile interval of stat over 1000 resamples of idx.
func bootstrap(idx []int, stat func([]int) float64) [2]float64 {
	if len(idx) == 0 {
		return [2]float64{}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const rounds = 1000
	vals := make([]float64, rounds)
	sample := make([]int, len(idx))
	for r := range vals {
		for j := range sample {
			sample[j] = idx[rng.IntN(len(idx))]
		}
		vals[r] = stat(sample)
	}
	sort.Float64s(vals)
	return [2]float64{vals[rounds*25/1000], vals[rounds*975/1000-1]}
}

// scoreBoundaries scores the detected boundaries against the data's, exactly and within one
// user turn (each gold boundary matched at most once).
func scoreBoundaries(preps []prepared) BoundaryScore {
	var s BoundaryScore
	var tp, tp1 int
	for _, p := range preps {
		gold := p.d.Boundaries()
		s.Gold += len(gold)
		s.Predicted += len(p.predicted)
		for _, b := range p.predicted {
			if slices.Contains(gold, b) {
				tp++
			}
		}
		used := map[int]bool{}
		for _, b := range p.predicted {
			for _, g := range []int{b, b - 2, b + 2} { // user messages are two apart
				if slices.Contains(gold, g) && !used[g] {
					used[g] = true
					tp1++
					break
				}
			}
		}
	}
	s.Precision, s.Recall = ratio(tp, s.Predicted), ratio(tp, s.Gold)
	s.F1 = f1(s.Precision, s.Recall)
	s.Within1.Precision, s.Within1.Recall = ratio(tp1, s.Predicted), ratio(tp1, s.Gold)
	s.Within1.F1 = f1(s.Within1.Precision, s.Within1.Recall)
	return s
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// WriteTable writes the report for a terminal.
func (r *CompactionReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: %d dialogues (%d multi-goal, %d single-goal), %d user turns\n\n", r.Dataset, r.Dialogues, r.MultiGoal, r.SingleGoal, r.UserTurns)
	b := r.Boundary
	fmt.Fprintf(tw, "goal boundaries: precision %.3f, recall %.3f, F1 %.3f (%d detected, %d in the data); within one turn: P %.3f R %.3f F1 %.3f\n\n",
		b.Precision, b.Recall, b.F1, b.Predicted, b.Gold, b.Within1.Precision, b.Within1.Recall, b.Within1.F1)
	fmt.Fprintln(tw, "strategy\tsize\ttokens/turn multi\treduction multi\t95% CI\tlater goals\tat the end\tretention multi\t95% CI\tend of goal\tefficiency\ttokens/turn single\treduction single\tretention single")
	rows := append(slices.Clone(r.Strategies), r.Matched.SlidingWindow)
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.3f\t%.3f-%.3f\t%.3f\t%.3f\t%.3f\t%.3f-%.3f\t%.3f\t%.3f\t%.0f\t%.3f\t%.3f\n", s.Name, s.Size,
			s.TokensPerTurnMultiGoal, s.TokenReductionMulti, s.TokenReductionMultiCI[0], s.TokenReductionMultiCI[1], s.TokenReductionLaterGoals, s.TokenReductionEndMulti,
			s.RetentionMulti, s.RetentionMultiCI[0], s.RetentionMultiCI[1], s.RetentionEndOfGoal, s.Efficiency,
			s.TokensPerTurnSingleGoal, s.TokenReductionSingle, s.RetentionSingle)
	}
	fmt.Fprintln(tw)
	for _, h := range slices.Sorted(maps.Keys(r.Hypotheses)) {
		v := r.Hypotheses[h]
		verdict := "NOT held"
		if v.Held {
			verdict = "held"
		}
		fmt.Fprintf(tw, "%s %s: %s\n", h, verdict, v.Reason)
	}
	fmt.Fprintf(tw, "\nreplay: %.1f s, %.1f dialogues/s through everything (turn decisions, %d dialogue replays); %.1f replays/s through one strategy\n",
		r.Cost.Seconds, r.Cost.DialoguesPerSecond, r.Cost.Replays, r.Cost.ReplaysPerSecond)
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "- %s\n", n)
	}
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r *CompactionReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// compactionColors tell the strategies apart in the plot.
var compactionColors = map[string]color.NRGBA{
	compact.Full:          {0x99, 0x99, 0x99, 0xff},
	compact.SlidingWindow: {0xe6, 0x9f, 0x00, 0xff},
	compact.GoalBoundary:  {0x00, 0x9e, 0x73, 0xff},
	compact.TokenBudget:   {0x56, 0xb4, 0xe9, 0xff},
}

// WritePlot draws retention against token reduction on multi-goal dialogues, one point per
// strategy with its efficiency in the legend (the matched sliding window hollow), with
// hypothesis 1's target shaded, as a PNG.
func (r *CompactionReport) WritePlot(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Compaction on %s, multi-goal dialogues", r.Dataset)
	p.X.Label.Text = "token reduction vs full context"
	p.Y.Label.Text = "retention of belief-state values"
	p.X.Min, p.X.Max = -0.05, 1
	p.Y.Min, p.Y.Max = 0, 1.05
	// Hypothesis 1's target: 40-60% fewer tokens, retention at least 0.95.
	target, err := plotter.NewPolygon(plotter.XYs{{X: 0.4, Y: 0.95}, {X: 0.6, Y: 0.95}, {X: 0.6, Y: 1.0}, {X: 0.4, Y: 1.0}})
	if err != nil {
		return err
	}
	target.Color = color.NRGBA{0x00, 0x9e, 0x73, 0x30}
	target.LineStyle.Width = 0
	p.Add(target)
	p.Legend.Add("hypothesis 1's target", target)
	rows := append(slices.Clone(r.Strategies), r.Matched.SlidingWindow)
	for i, s := range rows {
		sc, err := plotter.NewScatter(plotter.XYs{{X: s.TokenReductionMulti, Y: s.RetentionMulti}})
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = compactionColors[s.Name]
		sc.GlyphStyle.Radius = vg.Points(5)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		name := s.Name
		if i == len(rows)-1 {
			sc.GlyphStyle.Shape = draw.RingGlyph{}
			name += " (matched tokens)"
		}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s: efficiency %.2f", name, s.Efficiency), sc)
	}
	p.Legend.Left, p.Legend.Top = true, false
	p.Add(plotter.NewGrid())
	return p.Save(160*vg.Millimeter, 120*vg.Millimeter, path)
}
