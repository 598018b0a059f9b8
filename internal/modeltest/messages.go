package modeltest

import "strings"

// Message is a user message the benchmarks of the classifiers and of a whole turn time.
type Message struct{ Name, Text string }

// Messages are an ordinary question and the two kinds of longest message (8192 bytes may be
// sent): one 8 KiB word, where work super-linear in a word's length shows, and 8 KiB of prose,
// where work super-linear in a message's clauses or sentences does.
var Messages = []Message{
	{"ordinary", "What should I do if I smell gas after an earthquake?"},
	{"word8k", "what is " + strings.Repeat("qwertyuiopasdfghjklzxcvbnm", 8184/26)},
	{"prose8k", strings.Repeat(prose, 8184/len(prose))},
}

// prose is a paragraph of a bug report with a requirement in it.
const prose = "The nightly import job reads the partner feed, checks every row against the schema and writes " +
	"the valid ones to the staging table. We must keep customer emails out of the logs, and the job has to " +
	"finish before the morning reports run at six. Last week it failed twice because the feed arrived late; " +
	"since then it retries with a back-off. I would like to understand why the retries sometimes double the rows. "
