package kg

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// names renders entities as "kind:name" for compact expectations.
func names(es []Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Kind) + ":" + e.Name
	}
	return out
}

func TestExtract(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		text  string
		links []string
		want  []string
	}{
		// Proper-noun phrases.
		{
			name: "a word opening a sentence is no entity on its own",
			text: "Revenue grew. Microsoft said nothing.",
			want: []string{},
		},
		{
			name: "unless the text capitalizes it mid-sentence too",
			text: "Microsoft released Windows. Analysts liked what Microsoft showed.",
			want: []string{"proper:microsoft", "proper:windows"},
		},
		{
			name: "a phrase opening a sentence is an entity",
			text: "Bank of America raised rates. He banks at Bank of the West.",
			want: []string{"proper:bank of america", "proper:bank of the west"},
		},
		{
			name: "but a plural joined to a name opening a sentence is not part of it",
			text: "Partners of Microsoft agreed. Shares of Johnson & Johnson fell.",
			want: []string{"proper:microsoft", "proper:johnson & johnson"},
		},
		{
			name: "unless the text capitalizes the plural elsewhere",
			text: "Friends of the Earth met. We thank Friends of the Earth.",
			want: []string{"proper:friends of the earth"},
		},
		{
			name: "connectors do not end a phrase",
			text: "We own Johnson & Johnson and works by Vincent van Gogh.",
			want: []string{"proper:johnson & johnson", "proper:vincent van gogh"},
		},
		{
			name: "possessives end a phrase and are dropped",
			text: "We watched the Arizona Cardinals' game and Google's keynote with O’Brien's team.",
			want: []string{"proper:arizona cardinals", "proper:google", "proper:o'brien"},
		},
		{
			name: "function words and openers are not names",
			text: "The report is late. This matters. However, Acme Corp disagreed.",
			want: []string{"proper:acme corp"},
		},
		{
			name: "an opener before a name leaves the name",
			text: "The Cardinals won. However Microsoft lost. In Paris it rained.",
			want: []string{"proper:cardinals", "proper:microsoft", "proper:paris"},
		},
		{
			name: "an imperative verb opening a sentence is not part of the name",
			text: "Install Docker Desktop on Windows. Visit the Louvre.",
			want: []string{"proper:docker desktop", "proper:windows", "proper:louvre"},
		},
		{
			name: "punctuation and line breaks end a phrase",
			text: "We compared Redis, Memcached and Valkey (Linux Foundation).\n\nThe Paris\nOffice closed.",
			want: []string{"proper:redis", "proper:memcached", "proper:valkey", "proper:linux foundation", "proper:paris"},
		},
		{
			name: "dashes separate words",
			text: "We asked Microsoft—the vendor—and Google–Alphabet.",
			want: []string{"proper:microsoft", "proper:google", "proper:alphabet"},
		},
		{
			name: "a wrapped line goes on with the sentence; a short line does not",
			text: "This paragraph was wrapped by an editor at a fixed width of columns so\nMicrosoft is mid-sentence here.\n\nOverview\nAcme builds things.",
			want: []string{"proper:microsoft"},
		},
		{
			name: "list items and headings open sentences",
			text: "Databases\n\n- Redis\n- Postgres is used with Redis.",
			want: []string{"proper:redis"},
		},
		{
			name: "a full stop after an abbreviation does not end the sentence",
			text: "We met Dr. Smith, e.g. Kafka fans.",
			want: []string{"proper:smith", "proper:kafka"},
		},
		{
			name: "Roman numerals continue a name",
			text: "After World War II the treaty held.",
			want: []string{"proper:world war ii"},
		},
		{
			name: "hyphens and apostrophes stay inside a word",
			text: "We met Jean-Luc Picard near Coca-Cola.",
			want: []string{"proper:jean-luc picard", "proper:coca-cola"},
		},
		{
			name: "non-ASCII names",
			text: "We flew from Zürich to São Paulo.",
			want: []string{"proper:zürich", "proper:são paulo"},
		},
		// Acronyms.
		{
			name: "acronyms anywhere, even after the or at a sentence start",
			text: "GDPR applies to the NFL, to S3 buckets at AT&T and to their APIs.",
			want: []string{"acronym:gdpr", "acronym:nfl", "acronym:s3", "acronym:at&t", "acronym:api"},
		},
		{
			name: "an acronym is not part of a phrase",
			text: "We called NFL Commissioner Roger Goodell about COVID-19.",
			want: []string{"acronym:nfl", "proper:commissioner roger goodell", "acronym:covid-19"},
		},
		{
			name: "shouting is not acronyms",
			text: "WARNING: DO NOT DELETE THIS FILE. The AWS API is fine.",
			want: []string{"acronym:aws", "acronym:api"},
		},
		{
			name: "four capitals in a row are not yet shouting",
			text: "Ask the AWS S3 API TEAM about it.",
			want: []string{"acronym:aws", "acronym:s3", "acronym:api", "acronym:team"},
		},
		{
			name: "common words in capitals and single letters are not acronyms",
			text: "TODO: check OR and I think A is OK.",
			want: []string{},
		},
		// Code.
		{
			name: "identifiers",
			text: "Call getUserName or parse_config, then os.path.join() and fmt.Println(x) on MAX_SIZE.",
			want: []string{"code:getusername", "code:parse_config", "code:os.path.join", "code:fmt.println", "code:max_size"},
		},
		{
			name: "backticks, flags and paths",
			text: "Run `make  test` and `os.path.join()` with --dry-run=true and --v on config/app.yaml, ./run.sh, /etc/hosts and ~/.bashrc.",
			want: []string{"code:make test", "code:os.path.join", "code:--dry-run", "code:--v", "code:config/app.yaml", "code:run.sh", "code:/etc/hosts", "code:~/.bashrc"},
		},
		{
			name: "import paths and deep relative paths",
			text: "It imports github.com/ragd/ragd from src/main/java.",
			want: []string{"code:github.com/ragd/ragd", "code:src/main/java"},
		},
		{
			name: "PascalCase with an inner capital is code alone, part of a name in a phrase",
			text: "We moved to PostgreSQL from MySQL. GitHub Actions runs it. We like C++ and C#.",
			want: []string{"code:postgresql", "code:mysql", "proper:github actions", "code:c++", "code:c#"},
		},
		{
			name: "fenced code blocks are skipped",
			text: "```go\nfoo_bar := baz.Qux()\n```\nWe use Redis.",
			want: []string{"proper:redis"},
		},
		{
			name: "slashes, dots and underscores that are not code",
			text: "e.g. i.e. U.S. 3.14 v1.2 and/or TCP/IP 24/7 12/05/2024 _emphasis_ /month x@y.org",
			want: []string{},
		},
		// Links.
		{
			name:  "links come first and are canonical; URLs in the text are links",
			text:  "See https://Example.com/Docs/#intro and https://other.example/a?b=1.",
			links: []string{"HTTPS://example.com:443/Docs/", "./guide/setup.md#top", "mailto:x@y.z", "#local", "javascript:void(0)"},
			want:  []string{"link:https://example.com/Docs", "link:guide/setup.md", "link:https://other.example/a?b=1"},
		},
		// Order, duplicates and the cap.
		{
			name: "one entity per name, in order of first appearance",
			text: "We asked the NFL. The NFL's answer came from nfl_api and the NFL.",
			want: []string{"acronym:nfl", "code:nfl_api"},
		},
		{
			name: "empty",
			text: "",
			want: []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, names(Extract(tc.text, tc.links)))
		})
	}
}

func TestExtractSurface(t *testing.T) {
	t.Parallel()
	got := Extract("We saw the Arizona  Cardinals' coach and two APIs at https://Example.com/#x.", []string{"./a/../b.md"})
	require.Equal(t, []Entity{
		{Name: "b.md", Kind: Link, Surface: "./a/../b.md"},
		{Name: "arizona cardinals", Kind: Proper, Surface: "Arizona Cardinals"},
		{Name: "api", Kind: Acronym, Surface: "APIs"},
		{Name: "https://example.com", Kind: Link, Surface: "https://Example.com/#x"},
	}, got, "Surface is the first form as written, spaces collapsed, without possessive or punctuation")
}

func TestExtractCap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "We use PX%d. ", i)
	}
	got := Extract(b.String(), nil)
	require.Len(t, got, MaxEntities)
	require.Equal(t, "px0", got[0].Name)
	require.Equal(t, fmt.Sprintf("px%d", MaxEntities-1), got[MaxEntities-1].Name)

	long := "https://example.com/?q=" + strings.Repeat("x", maxNameLen)
	require.Empty(t, Extract("", []string{long}), "names too long for an index key are dropped")
}

func TestCanonicalLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"https://Example.COM/Docs/", "https://example.com/Docs"},
		{"HTTP://example.com:80/a#frag", "http://example.com/a"},
		{"https://user:pw@example.com:8443/a?", "https://example.com:8443/a"},
		{"https://example.com/", "https://example.com"},
		{"https://example.com/a?x=1&y=2#top", "https://example.com/a?x=1&y=2"},
		{"file:///srv/docs/../notes.md", "file:///srv/notes.md"},
		{"./docs/setup.md#install", "docs/setup.md"},
		{"../README.md", "../README.md"},
		{"/v1/ask", "/v1/ask"},
		{"#section", ""},
		{"mailto:someone@example.com", ""},
		{"javascript:alert(1)", ""},
		{"//cdn.example.com/x.js", ""},
		{"https:///nohost", ""},
		{"  ", ""},
	} {
		got, ok := canonicalLink(tc.in)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.want != "", ok, tc.in)
	}
}

// chunk300 is a 300-word chunk of mixed prose and technical text, like those ingest sees.
var chunk300 = func() string {
	para := "The Arizona Cardinals met Bank of America in Phoenix on Tuesday. According to the NFL, " +
		"the deal covers GDPR compliance for S3 buckets and AT&T lines. Engineers called " +
		"os.path.join() from config/app.yaml and ran `make test` with --dry-run before " +
		"PostgreSQL took over from MySQL. However, the team's parse_config helper and its " +
		"getUserName method still read https://example.com/docs/setup as their source. "
	words := strings.Fields(strings.Repeat(para, 8))
	return strings.Join(words[:300], " ")
}()

func BenchmarkExtract(b *testing.B) {
	b.SetBytes(int64(len(chunk300)))
	b.ReportAllocs()
	for b.Loop() {
		Extract(chunk300, nil)
	}
}
