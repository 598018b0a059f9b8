package mode

import (
	"math"
	"strings"

	"github.com/ragd/ragd/classify"
)

// Cue patterns, matched against the lower-cased turn with single spaces (the code cue against
// the original text). They follow the decision rules of ../shared/data/labels/README.md §1;
// the model learns how much each counts.
var (
	// Pasted errors: exception names, error prefixes, traces, exit codes, HTTP errors.
	errorCue = anyOf(
		`[a-z]\w*(?:error|exception)\b`, // ValueError, circuit_breaking_exception
		`\b(?:error|panic|failed):`, `\berror\[`, `\bnpm err!`,
		`\bat \S+ \(\S+:\d+`, // a JavaScript stack frame
		words(`traceback`, `exit code`, `exit status`, `segfault\w*`, `sigsegv`, `crashloopbackoff`,
			`oomkilled`, `stack ?trace`, `line \d+`, `[45]\d\d`),
	)
	// A failure described in words.
	failureCue = anyOf(words(
		`doesn'?t work`, `does not work`, `don'?t work`, `not working`, `isn'?t working`, `stopped working`,
		`won'?t`, `can'?t`, `cannot`, `can not`, `couldn'?t`, `unable to`,
		`fails?`, `failing`, `failed`, `failure`, `broken`, `breaks`, `crash(?:es|ed|ing)?`,
		`stuck`, `hangs?`, `freez(?:es|ing)`, `timed? ?out`, `times out`,
		`still (?:failing|broken|red|happening|the same)`,
		`keeps? (?:showing|failing|crashing|giving|returning|redirecting|citing)`,
		`returns? (?:0|none|null|nothing|empty|20)`, `never (?:set|used|goes|go)`,
		`ignored`, `blank`, `missing`, `drops?`, `wrong`, `bug`, `regression`, `worse`, `instead of`,
		`only (?:on|in|after|when|during|happens)`, `works? (?:fine )?(?:locally|on my|in chrome|manually|with)`,
		`what am i doing wrong`, `what'?s wrong`, `showing (?:an? )?errors?`, `gives? (?:an? )?errors?`,
		`getting (?:an? )?`,
	))
	// "Why does *my* X do Y" is a failure to diagnose; "why does X work this way" is a question.
	whyOwnCue = anyOf(words(
		`why (?:is|are|does|do|did|would|isn'?t|doesn'?t|won'?t|can'?t|could ?not|can ?not) (?:my|our|this|these|i|we)`,
		`why (?:can'?t|cannot|can not|could ?not|couldn'?t) i`, `why do you think i`, `why would that be`,
	))
	// Code and paths.
	codeCue = anyOf("`", `[{}]`, `\(\)`, `=>`, `->`, `::`, `--\w+`, `\$ \w+`,
		`\b\w+\.(?:py|go|js|ts|tsx|rs|java|rb|sh|yml|yaml|json|toml|md|sql|csv|txt|log)\b`,
		`(?:^|\s)(?:\.{0,2}/)?[\w.-]+/[\w./-]+`, // a path
	)
	// An imperative or a request for a concrete deliverable or errand.
	taskCue = anyOf(
		`^(?:please |pls |hey!? |hi!? |ok,? |now |also |and )?`+words(imperatives...),
		words(`(?:can|could|would) you (?:please )?(?:help me )?(?:write|create|add|fix|book|make|find|give|generate|draft|fill|translate|set|recommend|reserve|send|get)`),
		words(`i need`, `i want`, `i'?d like`, `i would like`, `i am looking`, `i 'm looking`, `i'm looking`, `looking for`, `need a`, `i need to`),
		words(`book`, `reservation`, `reserve`, `reference number`, `tickets?`, `taxi`, `postcode`, `phone number`, `address`),
		words(`show me the (?:changed|new|updated|code)`),
	)
	// Wanting to understand. The second list matches word starts, so "explain" also finds
	// "explained" and "confus" finds "confusing".
	learningCue = anyOf(
		opening(`what`, `who`, `when`, `where`, `which`, `why`, `how`),
		wordStarts(`what is`, `what's`, `what are`, `whats`, `what does`, `what do`, `how does`, `how do`,
			`how is`, `how are`, `how can i`, `how to`, `how did`, `why does`, `why do`, `why did`, `why is`,
			`why was`, `why are`, `why would`, `explain`, `teach me`, `walk me through`, `what happens`,
			`what's the difference`, `what is the difference`, `difference between`, `mean(?:s|ing)?\b`,
			`definition`, `in simple (?:words|terms)`, `intuition`, `curious`, `tell me (?:about|more)`,
			`can you tell me`, `i don'?t (?:get|understand)`, `not understanding`, `confus`),
	)
	// Open ideation and weighing options for one's own decision.
	explorationCue = anyOf(words(
		`should (?:we|i)`, `shall we`, `what if`, `pros and cons`, `brainstorm`, `ideas?`,
		`would it make sense`, `make sense`, `wonder(?:ing)?`, `thinking (?:about|of|out loud)`, `maybe`,
		`could we`, `worth it`, `thoughts\??`, `hypothetical(?:ly)?`, `imagine`,
		`let'?s (?:explore|think|imagine|list)`, `explor(?:e|ing)`, `better off`, `rethink`,
		`design question`, `is it (?:smart|a crazy|worth)`, `convince me`, `talk me out`, `sound sane`,
		`hold up`, `too gimmicky`, `where would you`, `what would you do`, `how would you approach`,
		`how might we`, `what would (?:break|we lose|a minimal|that)`, `go with`, `decide`,
		`back and forth`, `considering`, `toying`,
	))
	// A choice between options: a decision to weigh (EXPLORATION) or a textbook difference
	// (LEARNING); the words around it tell which.
	choiceCue = anyOf(words(`vs\.?`, `versus`, `or`, `options?`, `alternatives?`, `tradeoffs?`, `trade-offs?`,
		`approach(?:es)?`, `instead of`, `rather than`, `better`, `superior`, `prefer`))
	// Small talk and acknowledgements.
	generalCue = anyOf(
		opening(`thanks`, `thank you`, `thx`, `ty`, `ok`, `okay`, `k`, `hi`, `hello`, `hey`,
			`good (?:morning|night|evening)`, `great`, `cool`, `nice`, `lol`, `haha`, `bye`, `yes`, `yeah`,
			`yep`, `no`, `nope`, `sure`, `fine`, `right`, `alright`, `all right`, `wow`, `omg`, `hmm`, `hm`,
			`sorry`, `danke`, `merci`, `gracias`, `test`, `whatever`, `wait`),
		words(`thanks`, `thank you`, `appreciate`, `have a nice`, `see ya`, `bye`, `lifesaver`, `lol`, `haha`,
			`that'?s (?:all|fine|wrong)`, `no rush`, `take your time`, `that will be all`, `that should cover`,
			`all i need`),
	)
	// Requests about the assistant or the conversation itself (meta, GENERAL).
	metaCue = anyOf(words(
		`your (?:answers?|responses?|replies)`, `you (?:sound|keep|are a)`, `are you a (?:bot|person)`,
		`what can you do`, `this (?:conversation|chat)`, `(?:my|the) (?:chat )?history`,
		`repeat (?:the|that)`, `switch topics`, `where were we`, `where we are`, `less formal`,
		`more formal`, `stop (?:adding|using|saying)`, `answer in (?:german|english|french|spanish)`,
		`in (?:german|english|french|spanish) please`, `shorter`, `too much text`, `same question`,
	))
)

// imperatives are the verbs that open a request to carry something out.
var imperatives = []string{
	"write", "create", "add", "fix", "book", "translate", "summari[sz]e", "configure", "change", "make",
	"set(?: up)?", "open", "generate", "rename", "remove", "delete", "update", "refactor", "port",
	"implement", "draft", "convert", "schedule", "order", "cancel", "rebook", "wire", "dedupe", "move",
	"replace", "build", "deploy", "rotate", "give me", "find", "send", "show me", "list", "put",
	"install", "upgrade", "bump", "migrate", "benchmark", "reserve",
}

// words returns a pattern matching any of the alternatives (themselves patterns) as whole words.
func words(alts ...string) string { return `\b(?:` + strings.Join(alts, "|") + `)\b` }

// wordStarts is words without the final boundary.
func wordStarts(alts ...string) string { return `\b(?:` + strings.Join(alts, "|") + `)` }

// opening returns a pattern matching any of the alternatives as the text's first words.
func opening(alts ...string) string { return `^(?:` + strings.Join(alts, "|") + `)\b` }

// cuePatterns are the cue patterns, scanned for together in a turn (input).
var cuePatterns = classify.NewPatterns()

// anyOf compiles a pattern matching any of the given ones, one of cuePatterns.
func anyOf(patterns ...string) *classify.Pattern {
	return cuePatterns.Add(classify.MustPattern(strings.Join(patterns, "|")))
}

// input builds the classifier input of a turn and the previous user turn (or ""). Text
// n-grams carry the wording, and the previous turn's n-grams come under "prev" (terse
// follow-ups such as "still failing" take their mode from it). The extras are the decision
// rules' cues, which n-grams of a few hundred examples would only half learn: errors and
// failure phrasing (rule 1), code, imperatives and errands (rule 2), wanting to understand
// (rule 3), ideation and choices (rule 4), small talk and meta requests (rule 5), and the turn's
// length. Grouped cross-validation on train dropped two cues (session 7): the user's own stake
// (my, our, we...) with its conjunction with a choice, and the error cues on the previous turn,
// which its n-grams already carry. Together they cost nothing measurable (macro F1 -0.005
// [-0.015, +0.005]), and without them a model trained on the authored rows alone scores the real
// ones better (+0.029 [0.000, +0.049]). Every other cue family costs macro F1 when dropped.
func input(text, prev string) classify.Input {
	lower := cuePatterns.Scan(normalize(text))
	extra := map[string]float64{}
	cues := []struct {
		name string
		re   *classify.Pattern
		raw  bool // the cue reads text as written, not lower
	}{
		{"cue_error", errorCue, false},
		{"cue_failure", failureCue, false},
		{"cue_code", codeCue, true},
		{"cue_task", taskCue, false},
		{"cue_learning", learningCue, false},
		{"cue_exploration", explorationCue, false},
		{"cue_general", generalCue, false},
		{"cue_meta", metaCue, false},
		{"cue_why_own", whyOwnCue, false},
		{"cue_choice", choiceCue, false},
	}
	for _, c := range cues {
		if c.raw && c.re.MatchString(text) || !c.raw && lower.Match(c.re) {
			extra[c.name] = 1
		}
	}
	if strings.Contains(text, "?") {
		extra["question"] = 1
	}
	n := len(classify.Tokenize(text))
	extra["length"] = math.Min(math.Log1p(float64(n))/math.Log(40), 1)
	if n <= 3 {
		extra["short"] = 1
	}
	in := classify.Input{Text: text, Extra: extra}
	if prev = strings.TrimSpace(prev); prev != "" {
		in.Context = map[string]string{"prev": prev}
	}
	return in
}

// normalize lower-cases text, folds typographic apostrophes and collapses white space, the form
// the cue patterns expect.
func normalize(text string) string {
	text = strings.ReplaceAll(strings.ToLower(text), "’", "'")
	return strings.Join(strings.Fields(text), " ")
}
