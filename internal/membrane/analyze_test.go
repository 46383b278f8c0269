package membrane_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestAnalyzeText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"stems and stop words", "The databases were migrated", []string{"databas", "migrat"}},
		{"repeats kept in order", "database, databases; DATABASE", []string{"databas", "databas", "databas"}},
		{"snake_case", "uses_database", []string{"use", "databas", "uses_database"}},
		{"camelCase", "usesDatabase", []string{"use", "databas", "uses_database", "usesdatabas"}},
		{"kebab-case", "uses-database", []string{"use", "databas", "uses_database"}},
		{"dotted.name", "uses.database", []string{"use", "databas", "uses_database"}},
		{"stop word inside an identifier", "owned_by", []string{"own", "owned_by"}},
		{"identifier of config", "max_connections=100", []string{"max", "connect", "max_connections", "100"}},
		{"dotted segments kept whole", "cfg.max_connections", []string{"cfg", "max", "connect", "max_connections", "cfg_max_connections"}},
		{"acronym", "HTTPServer", []string{"http", "server", "http_server", "httpserver"}},
		{"acronym inside", "getHTTPResponse", []string{"get", "http", "respons", "get_http_response", "gethttprespons"}},
		{"plural acronym", "IDs and APIs", []string{"id", "api"}},
		{"PascalCase", "PostgreSQL", []string{"postgr", "sql", "postgre_sql", "postgresql"}},
		{"digits stay with letters", "ipv4 sha256 k8s", []string{"ipv4", "sha256", "k8s"}},
		{"digit then upper", "HTTP2Server", []string{"http2", "server", "http2_server", "http2server"}},
		{"version", "v1.2.3", []string{"v1", "2", "3", "v1_2_3"}},
		{"sentence end is no identifier", "It uses a database. Then it failed.", []string{"use", "databas", "fail"}},
		{"leading and trailing connectors", "__init__ -flag trailing-", []string{"init", "flag", "trail"}},
		{"apostrophes", "the user's key, don't", []string{"user", "key"}},
		{"curly apostrophe", "Alice’s cat", []string{"alic", "cat"}},
		{"unicode letters", "Café über naïve", []string{"café", "über", "naïve"}},
		{"NFKC", "ＤＡＴＡＢＡＳＥＳ ﬁle", []string{"databas", "file"}},
		{"ideographs one by one", "数据库", []string{"数", "据", "库"}},
		{"Lucene syntax is only separators", `title:x OR (y* AND "z")~2 \ -w +v^3 [a TO b] {c}`, []string{"titl", "x", "y", "z", "2", "w", "v", "3", "b", "c"}},
		{"only stop words", "what is it?", nil},
		{"only punctuation", "!!! ??? ... --- ___", nil},
		{"NUL and invalid UTF-8", "data\x00base \xed\xa0\x80migration\xff", []string{"data", "base", "migrat"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.AnalyzeText(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("AnalyzeText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestAnalyzeIdentifierSpellingsMatch: every spelling of an identifier
// yields its words and the same whole term, and prose naming its words
// matches them.
func TestAnalyzeIdentifierSpellingsMatch(t *testing.T) {
	for _, in := range []string{"usesDatabase", "UsesDatabase", "uses-database", "uses_database", "uses.database", "USES_DATABASE"} {
		got := membrane.AnalyzeQuery(in)
		for _, want := range []string{"use", "databas", "uses_database"} {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+want+" ") {
				t.Errorf("AnalyzeQuery(%q) = %q, missing %q", in, got, want)
			}
		}
	}
	prose := membrane.AnalyzeQuery("which databases does it use")
	if !reflect.DeepEqual(prose, []string{"databas", "use"}) {
		t.Errorf("prose = %q", prose)
	}
}

func TestAnalyzeQuery(t *testing.T) {
	many := make([]string, 0, 100)
	for i := range 100 {
		many = append(many, "w"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"deduplicated", "Database databases DATABASE", []string{"databas"}},
		{"identifier", "retrieve(\"max_connections\")", []string{"retriev", "max", "connect", "max_connections"}},
		{"owned_by", "owned_by", []string{"own", "owned_by"}},
		{"only stop words", "the of and", nil},
		{"only punctuation", "?!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.AnalyzeQuery(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("AnalyzeQuery(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := membrane.AnalyzeQuery(strings.Join(many, " ")); len(got) != membrane.MaxQueryTerms {
		t.Errorf("%d distinct words gave %d terms, want %d", len(many), len(got), membrane.MaxQueryTerms)
	}
}

// TestAnalyzeBounds: long and hostile inputs give bounded, syntax-free
// terms.
func TestAnalyzeBounds(t *testing.T) {
	term := regexp.MustCompile(`^[\p{Ll}\p{Lo}\p{Lm}\p{M}\p{N}_]+$`)
	inputs := map[string]string{
		"100 KB of words":  strings.Repeat("lorem ipsum_dolor sitAmet ", 4000),
		"300 KB of one":    strings.Repeat("a", 300<<10),
		"hostile":          strings.Repeat(`+-&&||!(){}[]^"~*?:\/ AND OR NOT `, 1000),
		"long identifier":  strings.Repeat("ab_", 100) + " " + strings.Repeat("x", 100),
		"invalid and NULs": strings.Repeat("\x00\xff\xfe\xed\xa0\x80ok", 1000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			text := membrane.AnalyzeText(in)
			if len(text) > membrane.MaxIndexTerms {
				t.Errorf("%d index terms, max %d", len(text), membrane.MaxIndexTerms)
			}
			q := membrane.AnalyzeQuery(in)
			if len(q) > membrane.MaxQueryTerms {
				t.Errorf("%d query terms, max %d", len(q), membrane.MaxQueryTerms)
			}
			for _, x := range append(text, q...) {
				if !term.MatchString(x) || len(x) > 128 {
					t.Fatalf("term %q carries syntax or is too long", x)
				}
			}
		})
	}
	if got := membrane.AnalyzeText(strings.Repeat("x", 65) + " " + strings.Repeat("ab_", 100)); len(got) != 100 {
		t.Errorf("over-long word and whole identifier: %d terms, want the 100 parts only", len(got))
	}
}
