package invariant

import (
	"strings"

	"github.com/ragd/ragd/classify"
)

// view is what the cues look at for one clause: its text, its sentence, its line and a few
// facts about the whole message. The lower-case texts are normalised: lower case, straight
// apostrophes, and the tokenised contractions of MultiWOZ ("do n't", "it 's") joined again.
type view struct {
	c     clause
	texts [numFields]string
	msg   *message
}

// field names one of the texts of a view.
type field int

const (
	raw      field = iota // the clause as written, for cues that need case ("KeyError")
	text                  // the clause, normalised
	plainT                // text without idioms and quotations, where requirement words are looked for
	lead                  // text without the fillers that open it ("sorry, ", "please ")
	plainL                // lead without idioms and quotations
	sentence              // the clause's sentence, normalised
	line                  // the clause's line as written: pasted output is recognised by the line
	numFields
)

// message holds what the cues ask about a whole message. Its memo keeps every answer of a
// pattern about a text, since the cues and the candidate rules ask the same questions many
// times, and all the clauses of a sentence or a line ask them about the same one.
type message struct {
	resolved  bool    // it says that something works now
	progress  bool    // it says that work is blocked
	debugging float64 // the probability that it is DEBUGGING (Debugging)
	memo      map[memoKey]bool
	named     map[memoKey]uint64 // the safety concepts a text names (re nil), as conceptIndex finds them
	// scanned holds each text the cues ask about, scanned once for what all patterns need.
	scanned map[memoKey]*classify.Scanned // re nil
	// sentences and contexts keep each sentence normalised and as the models' features: all the
	// clauses of a sentence share them, and working them out per clause was quadratic.
	sentences map[segment]string
	contexts  *classify.Contexts
}

type memoKey struct {
	re *classify.Pattern
	f  field
	at segment // the clause, sentence or line the text is of
}

// newMessage builds the message facts of msg; debugging is the probability that msg is
// DEBUGGING (see Debugging).
func newMessage(msg string, debugging float64) *message {
	norm := normalise(msg)
	return &message{resolved: resolvedRe.MatchString(norm), progress: progressRe.MatchString(norm),
		debugging: debugging, memo: map[memoKey]bool{}, named: map[memoKey]uint64{}, scanned: map[memoKey]*classify.Scanned{},
		sentences: map[segment]string{}, contexts: &classify.Contexts{}}
}

// FailureThreshold is the P(DEBUGGING) from which a message reports a current failure (the
// modes' labelling rule 1): a clause without a cue may then be a failure, and the message has
// one (see Detect). Chosen among 0.4 to 0.7 by grouped cross-validation (data/README.md).
const FailureThreshold = 0.5

// newView builds the view of clause c of msg.
func newView(msg string, c clause, m *message) *view {
	v := &view{c: c, msg: m}
	v.texts[raw] = msg[c.Start:c.End]
	v.texts[text] = normalise(v.texts[raw])
	v.texts[plainT] = plain(v.texts[text])
	v.texts[lead] = filler.ReplaceAllString(v.texts[text], "")
	v.texts[plainL] = filler.ReplaceAllString(v.texts[plainT], "")
	s, ok := m.sentences[c.Sentence]
	if !ok {
		s = normalise(msg[c.Sentence.Start:c.Sentence.End])
		m.sentences[c.Sentence] = s
	}
	v.texts[sentence] = s
	v.texts[line] = msg[c.Line.Start:c.Line.End]
	return v
}

// at returns the segment text f of the view is of: the clause, its sentence or its line.
func (v *view) at(f field) segment {
	switch f {
	case sentence:
		return v.c.Sentence
	case line:
		return v.c.Line
	}
	return v.c.segment
}

// key returns the memo key of re (nil: the text itself) about text f of the view. A clause that
// is its whole sentence has one text for both.
func (v *view) key(re *classify.Pattern, f field) memoKey {
	if f == sentence && v.c.Sentence == v.c.segment {
		f = text
	}
	return memoKey{re, f, v.at(f)}
}

// is reports whether re, one of patterns, matches the text f of the view.
func (v *view) is(re *classify.Pattern, f field) bool {
	k := v.key(re, f)
	got, ok := v.msg.memo[k]
	if !ok {
		tk := v.key(nil, f)
		t := v.msg.scanned[tk]
		if t == nil {
			t = patterns.Scan(v.texts[f])
			v.msg.scanned[tk] = t
		}
		got = t.Match(re)
		v.msg.memo[k] = got
	}
	return got
}

// concepts returns the safety concepts text f of the view names, one bit each (concept.go).
func (v *view) concepts(f field) uint64 {
	k := v.key(nil, f)
	got, ok := v.msg.named[k]
	if !ok {
		got = conceptIndex.find(v.texts[f])
		v.msg.named[k] = got
	}
	return got
}

var contraction = strings.NewReplacer(
	"’", "'", "‘", "'",
	"ca n't", "can't", "wo n't", "won't", " n't", "n't",
	" 's ", "'s ", " 'm ", "'m ", " 're ", "'re ", " 'll ", "'ll ", " 'd ", "'d ", " 've ", "'ve ",
)

// normalise lower-cases s and undoes MultiWOZ's tokenisation of contractions, so that one
// pattern reads "don't" however it was typed.
func normalise(s string) string {
	return contraction.Replace(strings.ToLower(s))
}

// filler is what opens a clause without carrying its meaning: politeness, hesitation, a
// greeting. It is cut from spans and from the clause-initial cues.
var filler = classify.MustPattern(`^(?:(?:sorry|excuse me|please|pls|plz|wait|hmm+|oh|ok(?:ay)?|yes|yeah|thanks|thank you|btw|well|also|and|but|so|one thing though|just)\b[\s,:.!]*)+`)

// cue is one binary feature of a clause.
type cue struct {
	name string
	on   func(v *view) bool
}

// patterns are the patterns the cues ask about (view.is), scanned for together.
var patterns = classify.NewPatterns()

// re compiles a pattern of the cue table, one of patterns. Patterns run on normalised
// (lower-case) text, but for errClassRe, errLineRe and quotedRe, which read case.
func re(pattern string) *classify.Pattern { return patterns.Add(classify.MustPattern(pattern)) }

// Idioms and distractors that use the words of a requirement without making one. They are cues
// of their own (the model learns they speak against a constraint) and they are blanked out
// before the requirement words are looked for, so "I must say" never counts as "must".
var idiom = re(`\b(?:i must (?:say|admit)|you must be|must have been|always happy|i always|as always|at least it|only curious|just curious|never mind|the only (?:thing|reason|one)|not only|if only|never really|never been|i've never|i have never|never heard|i (?:have|had) to (?:say|admit)|(?:will|'ll) have to do|(?:if|when) (?:we|i|you) (?:really )?(?:have|need) to\b|(?:i'll|i will|i'd|i would|i guess i'll) have to (?:check|ask|think|see|look|read|wait|try))\b`)

// Words of requirement.
var (
	mustRe       = re(`\bmust\b|\bmustn't\b`)
	neverRe      = re(`\bnever\b|\bnot ever\b|\bever\.?$`)
	alwaysRe     = re(`\balways\b|\bat all times\b`)
	onlyRe       = re(`\bonly\b|\bexclusively\b|\bstrictly\b`)
	requireRe    = re(`\b(?:require[sd]?|requirement|mandatory|non-negotiable|compulsory|obligatory)\b`)
	needsRe      = re(`\b(?:needs|requires)\b`)
	hasToRe      = re(`\b(?:has to|have to|'ll have to|had better|needs to|got to|gotta)\b`)
	forbidRe     = re(`\b(?:can't|cannot|can not|may not|must not|mustn't|should not|shouldn't|not allowed to|never)\s+(?:exceed|contain|include|be|have|use|touch|access|leave|go|take|call|change|store|return|run|show|drop|write)\b`)
	limitRe      = re(`\b(?:at least|at most|no more than|no less than|no later than|no earlier than|not later than|not more than|maximum|minimum|exactly|under \d|below \d|less than \d|within \d|max\b|min \d)`)
	conditionRe  = re(`\b(?:as long as|so long as|provided that|only if|on condition)\b`)
	makeSureRe   = re(`\b(?:make sure|ensure|be sure to|guarantee)\b`)
	dontStartRe  = re(`(?:^|[,:;]\s*)(?:please\s+|pls\s+)?(?:don't|do not|never|avoid|stop)\b`)
	noStartRe    = re(`^no\s+(?:\S+)`)
	noIdiomRe    = re(`^no\s*(?:thanks|thank|rush|problem|worries|idea|preference|other|luck|change|difference|,|!|\.|no\b|$)`)
	staysRe      = re(`\bstays?\s+(?:on|off|enabled|disabled|under|below|within|private|internal|read-only)\b`)
	keepStartRe  = re(`^(?:keep|stay|stick|use|store|convert|limit|cite|answer|reply|respond|write)\b`)
	dontWantRe   = re(`\b(?:i|we) (?:don't|do not) (?:want|need)\b`)
	mayRe        = re(`\bmay (?:not|only|never|take|be)\b|\ballowed\b`)
	shouldRe     = re(`\bshould\b|\bshouldn't\b|\bwould like\b|\bi'd like\b|\bwant\b`)
	softRe       = re(`\b(?:ideally|nice to have|if possible|preferably|would be nice|prefer|no rush|if you can|optional|flexible|don't care|doesn't matter|whatever is easiest|no preference|not picky)\b`)
	notNeededRe  = re(`\b(?:not required|isn't required|not a requirement|isn't a concern|not a concern|not needed|doesn't need to|does not need to|don't need to|no need|doesn't have to|does not have to|don't have to|do not have to|needn't|not necessary|not necessarily|optional)\b`)
	questionRe   = re(`\?\s*$`)
	askStartRe   = re(`^(?:what|why|how|when|where|which|who|is|are|do|does|did|can|could|should|would|will|am|any)\b`)
	aboutWordsRe = re(`\b(?:what does|what's the difference|difference between|when you say|meaning of|explain|means?\b|definition)`)
)

// Words of safety, security and privacy: what needs protecting, how it is protected, and the
// policies and harms that make a requirement a safety one.
var (
	secretRe  = re(`\b(?:(?:access|api|auth|bearer|refresh|session|id|admin|jwt)[ _-]?tokens?|the token|tokens? in|secrets?|passwords?|passwd|credentials?|api keys?|keys?|\.env|pii|personal (?:data|information|details)|customer (?:data|names)|patient data|user data|emails?|phone numbers?|ips?|ip address(?:es)?|address|ssn|credit cards?|2fa|otp|health data|medical records?)\b`)
	exposeRe  = re(`\b(?:log|logs|logged|logging|print|printed|expose[sd]?|leak(?:s|ed)?|commit(?:ted)?|shar(?:e|ed|ing)|send|sent|paste[sd]?|upload(?:ed)?|returned|shown|display(?:ed)?|notify|notifying|leave)\b`)
	protectRe = re(`\b(?:mask(?:ed)?|redact(?:ed)?|anonymi[sz](?:e|ed)|pseudonymi[sz]e|encrypt(?:ed)?|hash(?:ed)?|saniti[sz](?:e|ed)|escape[sd]?|scrub(?:bed)?|rotate|revoke|delete)\b`)
	policyRe  = re(`\b(?:security|secure[sd]?|privacy|private|confidential|gdpr|lgpd|hipaa|ccpa|compliance|tls|ssl|https|xss|csrf|injection|parameteri[sz]ed|least privileges?|privileges?|read-only|readonly|root|admin|permissions?|acl|validation|verification|authori[sz]ation|authenticat\w*|sandbox|tenants?|multi-tenant|isolat\w*|separated|user-supplied|untrusted|arbitrary code|external (?:api|tool|service)s?|third[- ]party|internal urls?|own servers|on-prem\w*|residency|eu|eu-\w+)\b`)
	harmRe    = re(`\b(?:safety|safe|unsafe|harm\w*|danger\w*|hazard\w*|injur\w*|hurt|allerg\w*|medical|medication|dos(?:e|age)s?|pregnan\w*|patients?|kill switch|emergency|e-stop|guards?|lifeguard|helmet|fire|smoke|gas|toxic|poison\w*|chemicals?|bleach|voltage|live wir\w*|breaker|electric\w*|overheat\w*|speed limit|too fast|faster than|collision|kids?|child(?:ren)?|minors?|strangers|location|lock screen|human|people nearby|anyone (?:inside|nearby)|auto-send|payment|payouts?|real money|fraud\w*|scam\w*|phishing|malware|virus(?:es)?|antivirus|scann?(?:ed|ing)? for|brute[- ]forc\w*|attack\w*|exploit\w*|vulnerab\w*|access\w*|operators?|workers?|pedestrians?|bystanders?|allow-?list|whitelist|deny-?list|blocklist|approv\w*|audit\w*|2fa|mfa|two-factor|encrypt\w*|backups?)\b`)
)

// Words of correction.
var (
	correctLeadRe = re(`^(?:not\b|no\s*[,.!]|no no\b|nope\b|nah\b|actually\b|oops\b|correction\b|scratch that\b|my bad\b|my mistake\b|wait\b|sorry\b)`)
	actuallyRe    = re(`\bactually\b`)
	meantRe       = re(`\b(?:i meant|i mean|meant to say|i misspoke|i was wrong|i mixed up|typo|i made a mistake|my mistake|my bad|wrong (?:file|one)|i previously said|did i say|correction)\b`)
	youSaidRe     = re(`\b(?:you said|you assumed|you wrote|you('re| are) wrong|are you sure|that's not (?:right|correct|true|what)|that's wrong|that's incorrect|was incorrect|is incorrect|isn't right|not what i (?:asked|meant|said)|as i said|like i said|i told you|i said)\b`)
	notXRe        = re(`(?:,|\s-|\s—)\s*not\s+\S|\bnot\b[^,.]*,\s*(?:it's|it is|its|i'm|we're|they're)\b|\bnot\s+[^,.]+?\s+but\b|\brather\b|\binstead\b`)
	notFillerRe   = re(`,\s*not (?:even|only|sure|yet|really|at all)\b`)
	copulaRe      = re(`\b(?:it's|it is|it was|its|is|are|was|were|'s)\b`)
	noLongerRe    = re(`\b(?:no longer|anymore|any more)\b`)
	changeRe      = re(`\b(?:clarify|to be clear|back up|scratch that|change of plans?|changed my mind|after all|never mind\s*,?\s*i (?:don't|do not) want)\b`)
)

// Words of failure.
var (
	errClassRe   = re(`\b[A-Z]\w*(?:Error|Exception)\b|\bError\b|\b(?:OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|Evicted|SIGSEGV|SIGKILL)\b|\bERR!|\bFAILED\b|\bFATAL\b|\bpanic:|\bfatal:|\bTraceback\b|\b[Ee]rror(?:\[\w+\])?:|\b[A-Z_]+_(?:FAILED|ERROR|DENIED|REFUSED|TIMEOUT|INVALID)\b|\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Off|Killed|Failed|Denied)\b`)
	errWordRe    = re(`\b(?:errors?|exceptions?|warnings?)\b`)
	errLineRe    = re(`^\s*(?:\S+\s+\|\s+)?(?:[\w .$-]{1,30}:\s+)?(?:Traceback|panic:|fatal:|FATAL|FAILED|ERROR|Error|E\d{3,}|npm ERR!|error(?:\[\w+\])?:|(?:\w+\.)*\w*(?:Error|Exception)\b|Exception)`)
	errCodeRe    = re(`\b(?:exit(?:ed)? (?:with )?(?:code|status)|exit \d+|oomkilled|crashloopbackoff|imagepullbackoff|segfault|segmentation fault|core dumped|permission denied|no such file|not found|timed out|timeout|refused|econnrefused|eaddrinuse|\w+_failed|killed)\b|\b(?:returns?|returned|got|http|status|code|error|answers?)\s+[45]\d\d\b|\([45]\d\d\b`)
	failRe       = re(`\b(?:fails?|failed|failing|failure|crash\w*|broken|breaks|dies|died|hangs?|hung|stuck|freez\w+|froze|won't (?:start|build|run|load|work|compile|install|connect)|doesn't (?:work|start|load|run|compile|build)|does not work|not working|isn't working|stopped working|not start|rejects?|rejected|loops? forever|keeps (?:showing|throwing|returning|giving|bouncing|crashing|failing)|is red|went red|blocked|can't find|cannot find)\b`)
	cannotRe     = re(`\b(?:can't|cannot|can not|could not|couldn't|unable to|not able to|nobody can|no one can)\b`)
	subjCannotRe = re(`\b(?:i|we|nobody|no one|it|they|users?)\s+(?:can't|cannot|can not|couldn't|could not|am unable|are unable)\b`)
	quotedRe     = re("`[^`]+`|\"[^\"]{6,}\"|(?:^|[\\s(:])'[^']{6,}'")
	resolvedRe   = re(`\b(?:(?:is|are|was|got|been|it's|that's)\s+(?:\w+\s+)?(?:fixed|resolved|solved|sorted)|fixed (?:now|it)|resolved now|works now|working now|it's fine|is fine now|fine now|works on my machine|that works|it works|figured it out|found it)\b`)
	// pastRe and presentRe place a failure in time: one told only in the past ("the build failed
	// twice last week") is a story, not a blocker; one that is still happening is.
	pastRe     = re(`\byesterday(?:$|[^'\w])|\b(?:last (?:week|night|month|year|time|sprint|friday|monday|tuesday|wednesday|thursday|saturday|sunday)|(?:days?|weeks?|months?|years?) ago|used to|previously|back then|earlier (?:this|today)|in the past|once before|the other day)\b`)
	presentRe  = re(`\b(?:now|right now|currently|still|again|since|today|this morning|keeps?|every time|whenever|at the moment|anymore|any more)\b`)
	hypoRe     = re(`\b(?:what would happen|what happens if|what if|in case|hypothetically|if it ever|suppose)\b`)
	butWorksRe = re(`\b(?:but|still)\s+(?:\w+\s+)?(?:works|runs)\b|\bappears but\b`)
	progressRe = re(`\b(?:can't (?:merge|deploy|test|work|run|release|ship|apply|log in|sign in)|cannot work|no one can|nobody can|until (?:this|that|it)|blocked|so i can't)\b`)
	// imperativeRe opens a clause with an order that keeps something safe or shut ("disable the
	// motor whenever the door is open").
	imperativeRe = re(`^(?:always |never )?(?:disable|enable|keep|block|deny|reject|refuse|require|restrict|limit|lock|mask|redact|encrypt|scan|verify|validate|check|stop|shut|turn off|switch off|cut|sanitize|sanitise|escape|isolate|sandbox|rate-limit|throttle|log out|revoke)\b`)
	firstPerRe   = re(`\b(?:i|i'm|we|we're|my|our|me|us)\b`)
	// occursRe is a verb telling that an event takes place: a clause with it tells when
	// something happens ("only happens when the session has expired", "it never occurs on
	// staging"), not what the solution must do.
	occursRe = re(`\b(?:happen(?:s|ed|ing)?|occur(?:s|red|ring|rence)?|reproduc(?:e|es|ed|ing|ible)|(?:shows?|showed|shown|pops?|popped|comes?|came|crops?|cropped) up)\b`)
)

// occasion reports whether clause v tells when an event happens rather than what must be: a verb
// of occurrence without an explicit demand ("make sure this never happens again" is a rule).
func occasion(v *view) bool {
	return v.is(occursRe, plainT) &&
		!(v.is(mustRe, plainT) || v.is(hasToRe, plainT) || v.is(makeSureRe, plainT) || v.is(requireRe, plainT))
}

// cues is the feature set of the clause model, in the order of its weights. Each cue is a
// question about one clause; "s." cues ask about its sentence and "m." cues about the message,
// because some clauses are decided by their neighbours. The safety concepts (concept.go) end it.
var cues = append([]cue{
	{"must", func(v *view) bool { return v.is(mustRe, plainT) }},
	{"never", func(v *view) bool { return v.is(neverRe, plainT) }},
	{"always", func(v *view) bool { return v.is(alwaysRe, plainT) }},
	{"only", func(v *view) bool { return v.is(onlyRe, plainT) }},
	{"require", func(v *view) bool { return v.is(requireRe, plainT) && !v.is(notNeededRe, plainT) }},
	{"has-to", func(v *view) bool { return v.is(hasToRe, plainT) }},
	{"needs", func(v *view) bool { return v.is(needsRe, plainT) }},
	{"forbid", func(v *view) bool { return v.is(forbidRe, plainT) }},
	{"limit", func(v *view) bool { return v.is(limitRe, plainT) }},
	{"condition", func(v *view) bool { return v.is(conditionRe, plainT) }},
	{"make-sure", func(v *view) bool { return v.is(makeSureRe, plainT) }},
	{"dont-start", func(v *view) bool { return v.is(dontStartRe, plainL) }},
	{"no-start", func(v *view) bool { return v.is(noStartRe, lead) && !v.is(noIdiomRe, lead) }},
	{"keep-start", func(v *view) bool { return v.is(keepStartRe, lead) }},
	{"dont-want", func(v *view) bool { return v.is(dontWantRe, plainT) }},
	{"may", func(v *view) bool { return v.is(mayRe, plainT) }},
	{"should", func(v *view) bool { return v.is(shouldRe, text) }},
	{"soft", func(v *view) bool { return v.is(softRe, text) }},
	{"not-needed", func(v *view) bool { return v.is(notNeededRe, plainT) }},
	{"idiom", func(v *view) bool { return v.is(idiom, text) }},
	{"question", func(v *view) bool { return v.is(questionRe, text) || v.is(questionRe, sentence) }},
	{"ask-start", func(v *view) bool { return v.is(askStartRe, lead) }},
	{"about-words", func(v *view) bool { return v.is(aboutWordsRe, text) }},

	{"secret", func(v *view) bool { return v.is(secretRe, text) }},
	{"expose", func(v *view) bool { return v.is(exposeRe, text) }},
	{"protect", func(v *view) bool { return v.is(protectRe, text) }},
	{"policy", func(v *view) bool { return v.is(policyRe, text) }},
	{"harm", func(v *view) bool { return v.is(harmRe, text) }},
	{"s.safety", func(v *view) bool { return safetyWords(v, sentence) }},
	{"safety+rule", func(v *view) bool { return safetyWords(v, text) && ruleWords(v) }},
	{"s.safety+rule", func(v *view) bool { return safetyWords(v, sentence) && ruleWords(v) }},

	{"correct-lead", func(v *view) bool { return v.is(correctLeadRe, text) }},
	{"s.correct-lead", func(v *view) bool { return !v.is(correctLeadRe, text) && v.is(correctLeadRe, sentence) }},
	{"actually", func(v *view) bool { return v.is(actuallyRe, text) }},
	{"meant", func(v *view) bool { return v.is(meantRe, text) }},
	{"you-said", func(v *view) bool { return v.is(youSaidRe, text) }},
	{"s.you-said", func(v *view) bool { return v.is(youSaidRe, sentence) || v.is(meantRe, sentence) }},
	{"not-x", func(v *view) bool { return v.is(notXRe, text) && !v.is(notFillerRe, text) }},
	{"not-x+is", func(v *view) bool {
		return v.is(notXRe, text) && !v.is(notFillerRe, text) && v.is(copulaRe, text)
	}},
	{"no-longer", func(v *view) bool { return v.is(noLongerRe, text) }},
	{"change", func(v *view) bool { return v.is(changeRe, text) }},

	{"err-class", func(v *view) bool { return v.is(errClassRe, raw) }},
	{"err-word", func(v *view) bool { return v.is(errWordRe, text) }},
	{"err-line", func(v *view) bool { return v.is(errLineRe, line) }},
	{"err-code", func(v *view) bool { return v.is(errCodeRe, text) }},
	{"fail", func(v *view) bool { return v.is(failRe, text) }},
	{"cannot", func(v *view) bool { return v.is(cannotRe, text) && !v.is(forbidRe, text) }},
	{"subject-cannot", func(v *view) bool { return v.is(subjCannotRe, text) }},
	{"quoted", func(v *view) bool { return v.is(quotedRe, raw) }},
	{"resolved", func(v *view) bool { return v.is(resolvedRe, text) }},
	{"m.resolved", func(v *view) bool { return v.msg.resolved }},
	{"hypothetical", func(v *view) bool { return v.is(hypoRe, sentence) }},
	{"past", func(v *view) bool { return v.is(pastRe, sentence) && !v.is(presentRe, sentence) }},
	{"present", func(v *view) bool { return v.is(presentRe, sentence) }},
	{"imperative", func(v *view) bool { return v.is(imperativeRe, lead) }},
	{"but-works", func(v *view) bool { return v.is(butWorksRe, sentence) }},
	{"progress", func(v *view) bool { return v.is(progressRe, text) }},
	{"m.progress", func(v *view) bool { return v.msg.progress }},
	{"first-person", func(v *view) bool { return v.is(firstPerRe, text) }},
	{"failure+question", func(v *view) bool { return failureWords(v) && v.is(questionRe, sentence) }},
}, conceptCues()...)

// plain is text with its idioms and quotations blanked out, so that the words of a requirement
// inside "I must say", "at least it compiles" or a quoted error ("`maximum recursion depth
// exceeded`") are not read as one.
func plain(text string) string {
	return quotation.ReplaceAllString(idiom.ReplaceAllString(text, "_"), "_")
}

// quotation is text in backticks or double quotes: what someone else wrote, not what the user
// asks for.
var quotation = classify.MustPattern("`[^`]*`|\"[^\"]*\"")

// safetyWords reports whether text f of v speaks of something to protect or a reason to
// protect it.
func safetyWords(v *view, f field) bool {
	return v.is(secretRe, f) || v.is(protectRe, f) || v.is(policyRe, f) || v.is(harmRe, f)
}

// ruleWords reports whether the clause is worded as a rule rather than a topic.
func ruleWords(v *view) bool {
	return v.is(mustRe, plainT) || v.is(neverRe, plainT) || v.is(onlyRe, plainT) || v.is(alwaysRe, plainT) ||
		v.is(hasToRe, plainT) || v.is(forbidRe, plainT) || v.is(makeSureRe, plainT) ||
		v.is(dontStartRe, plainT) || (v.is(noStartRe, lead) && !v.is(noIdiomRe, lead)) ||
		v.is(keepStartRe, lead) || v.is(staysRe, plainT) || v.is(protectRe, text) || v.is(requireRe, plainT) || v.is(mayRe, plainT) ||
		strings.Contains(v.texts[plainT], "without ")
}

// failureWords reports whether the clause reports a failure in any form.
func failureWords(v *view) bool {
	return v.is(errClassRe, raw) || v.is(errWordRe, text) || v.is(failRe, text) || v.is(cannotRe, text)
}

// candidates returns the classes clause v may take. "No invariant" is always one; a type is one
// when the clause has a cue of that type and none of the distractors that the labelling
// conventions name for it: a question or an explicit non-requirement is neither a safety
// requirement nor a hard constraint ("do I have to have a boating safety certificate?"), a soft
// preference without a strong modal is no hard constraint ("ideally under 100 lines"), and a
// failure that is fixed, hypothetical, only a warning or asked about in general ("what does exit
// code 137 mean?") is not blocking, and a clause telling when an event happens is no rule
// ("it only happens when the session has expired": occasion). The model chooses
// among the candidates only, so these rules hold whatever the weights. cued reports whether a
// cue of any type fired, ruled out or not: a clause without one is open's to judge, while one
// whose every cue the conventions rule out is no invariant.
func candidates(v *view) (ok [len(classes)]bool, cued bool) {
	asked := v.is(questionRe, text) || v.is(questionRe, sentence)
	waived := v.is(notNeededRe, plainT)
	rule := ruleWords(v) || v.is(mustRe, plainT) || v.is(needsRe, plainT) || v.is(limitRe, plainT) ||
		v.is(conditionRe, plainT) || v.is(dontWantRe, plainT)
	corrects := correctionWords(v, sentence)
	fails := failureWords(v) || v.is(errLineRe, line) || v.is(errCodeRe, text) || v.is(progressRe, text)
	gone := settled(v, asked)
	wished := v.is(softRe, text) && !strongRule(v)
	told := occasion(v)

	ok[noType] = true
	// Any rule may be a safety one: its words decide in the type model, and recall matters more
	// here than anywhere, so no list of safety words gates it.
	ok[safety] = (rule || v.is(imperativeRe, lead)) && !asked && !waived && !wished && !told
	ok[correction] = corrects
	ok[constraint] = rule && !asked && !waived && !wished && !told
	ok[blocking] = fails && !gone
	return ok, rule || v.is(imperativeRe, lead) || corrects || fails
}

// strongRule reports whether clause v holds a rule word no wish or retraction softens: a strong
// modal, always or never, a requirement or a condition.
func strongRule(v *view) bool {
	return v.is(mustRe, plainT) || v.is(neverRe, plainT) || v.is(alwaysRe, plainT) || v.is(requireRe, plainT) ||
		v.is(hasToRe, plainT) || v.is(forbidRe, plainT) || v.is(conditionRe, plainT)
}

// retracts reports whether clause v corrects something said before in its own words ("Actually,
// I meant battery smoke alarms only.": the correction cues on the clause, not its sentence) and
// holds no strong rule word (strongRule). Such a clause names what it corrects: a safety concept
// in it is the subject of the correction, not what a rule protects (judge).
func retracts(v *view) bool {
	return correctionWords(v, text) && !strongRule(v)
}

// correctionWords reports whether clause v says that it corrects: a correcting lead, "I meant"
// or "you said" in f (the clause's sentence, since they open it for every clause after them, or
// the clause alone), or "actually", "not X" or a change of mind in the clause itself.
func correctionWords(v *view, f field) bool {
	return v.is(correctLeadRe, f) || v.is(meantRe, f) || v.is(youSaidRe, f) ||
		v.is(actuallyRe, text) || v.is(notXRe, text) || v.is(noLongerRe, text) || v.is(changeRe, text)
}

// settled reports whether the conventions rule out that clause v reports a current failure:
// its sentence says the failure is fixed, hypothetical or only past, that the thing works, or it
// asks about an error in general.
func settled(v *view, asked bool) bool {
	return v.is(resolvedRe, sentence) || v.is(hypoRe, sentence) || v.is(butWorksRe, sentence) ||
		v.is(pastRe, sentence) && !v.is(presentRe, sentence) ||
		asked && v.is(aboutWordsRe, sentence)
}

// open returns the classes a clause without any cue may take: every type but those the
// conventions rule out whatever the words, as in candidates (a question, a waived need, a wish
// or an occasion is no rule; a fixed, past or hypothetical failure, or one asked about in
// general, is not blocking; quoted words are no rule of the user's), and but a correction: one
// message alone cannot show that it contradicts an earlier one unless it says so, and saying so
// is a cue ("no,", "actually", "I meant"). Without a word of failure, a clause may be a blocking
// error only in a message the mode classifier reads as more likely DEBUGGING than not
// (FailureThreshold).
func open(v *view) [len(classes)]bool {
	asked := v.is(questionRe, text) || v.is(questionRe, sentence)
	// Quoted words are someone else's: a rule in quoted docs is not the user's, while a quoted
	// error may still be the failure.
	rule := !asked && !v.is(notNeededRe, plainT) && !v.is(softRe, text) && !v.is(quotedRe, raw) && !occasion(v)
	gone := settled(v, asked)
	failure := !gone && v.msg.debugging >= FailureThreshold
	return [len(classes)]bool{noType: true, safety: rule, constraint: rule, blocking: failure}
}

// features returns the cue vector of v: 1 where a cue fires, then a constant 1 for the bias.
func features(v *view) []float64 {
	x := make([]float64, len(cues)+1)
	for i, c := range cues {
		if c.on(v) {
			x[i] = 1
		}
	}
	x[len(cues)] = 1
	return x
}
