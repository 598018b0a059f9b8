package kg

import "strings"

// set builds a lookup table from space-separated words.
func set(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// connectors may stand between the capitalized words of one name: "Bank of America", "Bank of
// the West", "Johnson & Johnson", "Vincent van Gogh". "and" is not one: "Microsoft and Google"
// are two names.
var connectors = set("of the de & van von der den del da du di")

// stopWords are function words and sentence openers: capitalized, they are still not names, and
// they end a phrase ("However Acme Corp" names "Acme Corp"). Contractions are here because the
// apostrophe keeps them one word. Some could be names ("May", "Will"); in English text they are
// far more often the modal verb.
var stopWords = set(`
	a an this that these those there here then than so but and or nor if when while where what
	which who whom whose why how however therefore thus hence moreover furthermore meanwhile
	instead also although though because since until unless after before once as at by for from
	in into on onto off out over under to up with within without via per about above below
	between among through during against despite unlike regarding including according
	i me my mine we us our ours you your yours he him his she her hers it its they them their
	is are was were be been being am do does did done have has had can could will would shall
	should may might must not no yes all any some many much more most less few each every both
	either neither other another such only just even still yet now today tomorrow yesterday
	again already always never often sometimes usually first second third finally next last
	one let please thanks thank hello hi hey dear ok okay well oh like sure maybe perhaps indeed
	overall otherwise else whether currently recently later earlier soon anyway besides
	nevertheless nonetheless similarly likewise additionally alternatively consequently
	specifically generally basically actually really simply importantly note notes
	mr mrs ms dr prof st mt jr sr
	i'm i've i'll i'd we're we've we'll you're you've you'll they're they've he'd she'd
	don't doesn't didn't can't won't isn't aren't wasn't weren't shouldn't wouldn't couldn't
`)

// starters are words that open imperative sentences in documentation. They are dropped from the
// start of a phrase that opens a sentence ("Install Docker Desktop"), and only there: "the Open
// Group" keeps its word.
var starters = set(`
	add ask avoid build call change check choose click compare configure connect consider copy
	create define delete deploy disable download edit enable ensure enter find follow get give go
	imagine install keep learn load look make open pass press put read remove replace restart
	return run save see select send set start stop take tell try type update upgrade use verify
	visit wait write
`)

// capsWords are words that are written in capitals without being acronyms: function words of
// upper-case text and the markers of code comments and logs.
var capsWords = set(`
	AM PM OK OR AND NOT THE TO IN ON AT OF IF IS BY AS BE DO GO NO SO UP WE MY ME HE AN FOR BUT
	YES ALL ARE WAS YOU NEW END
	TODO NOTE FIXME XXX TIP INFO WARN ERROR DEBUG TRACE FATAL TRUE FALSE NULL NIL NONE
`)

// abbreviations end with a full stop that does not end the sentence ("Dr. Smith", "e.g. Redis").
var abbreviations = set("mr mrs ms dr prof st mt jr sr vs cf e.g i.e fig no approx")
