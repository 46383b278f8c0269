package membrane_test

import (
	"reflect"
	"regexp"
	"slices"
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

// TestSearchTermsCoverPayloadFields: every field docs/retrieval.md lists
// as searchable reaches a record's search terms; ids of other records and
// tags do not.
func TestSearchTermsCoverPayloadFields(t *testing.T) {
	outcome := membrane.OutcomeFailure
	tests := []struct {
		name    string
		payload membrane.Payload
		want    []string
		absent  []string
	}{
		{"episodic", &membrane.EpisodicPayload{
			SessionID: "sess-42",
			Timeline:  []membrane.TimelineEvent{{EventKind: "user_message", Ref: "turn-17", Summary: "Caroline adopted puppies"}},
			ToolGraph: []membrane.ToolNode{{ID: "n1", Tool: "kubectl", Args: map[string]any{"kube_namespace": "ledgerspace", "replicas": 3.0},
				Result: map[string]any{"status": "rolled back"}}},
			Outcome: &outcome, Artifacts: []string{"report.pdf"}, ToolGraphRef: "graph-9",
			Environment: &membrane.EnvironmentSnapshot{OS: "linux", WorkingDirectory: "/srv/app", ToolVersions: map[string]any{"helm": "3.14"}},
		}, []string{"sess_42", "user_message", "turn_17", "carolin", "adopt", "puppi", "kubectl", "kube_namespace", "ledgerspac", "replica", "3",
			"status", "roll", "back", "failur", "report_pdf", "graph_9", "linux", "srv", "app", "helm", "3_14"}, []string{"n1"}},
		{"working", &membrane.WorkingPayload{ThreadID: "thread-pg", State: membrane.TaskBlocked, ContextSummary: "pool exhausted",
			NextActions: []string{"raise the limit"}, OpenQuestions: []string{"why so many idle sessions"},
			ActiveConstraints: []membrane.Constraint{{Type: "config", Key: "max_connections", Value: 200.0}}},
			[]string{"thread_pg", "block", "pool", "exhaust", "rais", "limit", "idl", "session", "config", "max_connections", "200"}, nil},
		{"semantic", &membrane.SemanticPayload{Subject: "billing", Predicate: "owned_by", Object: map[string]any{"team": "payments"},
			Validity: &membrane.Validity{Mode: membrane.ValidityConditional, Conditions: map[string]any{"region": "eu-west"}},
			Evidence: []membrane.EvidenceRef{{SourceType: "episode", SourceID: "01a2b3c4"}}},
			[]string{"bill", "owned_by", "team", "payment", "region", "eu_west"}, []string{"01a2b3c4", "episod"}},
		{"competence", &membrane.CompetencePayload{SkillName: "failover",
			Triggers:      []membrane.Trigger{{Signal: "primary unreachable", Conditions: map[string]any{"env": "prod"}}},
			Recipe:        []membrane.RecipeStep{{Step: "promote replica", Tool: "patronictl", Validation: "writes succeed"}},
			RequiredTools: []string{"psql"}, FailureModes: []string{"split brain"}, Fallbacks: []string{"page the DBA"}},
			[]string{"failov", "primari", "unreach", "env", "prod", "promot", "patronictl", "write", "succeed", "psql", "split", "brain", "page", "dba"}, nil},
		{"plan_graph", &membrane.PlanGraphPayload{PlanID: "plan-pg-16", Intent: "upgrade PostgreSQL",
			Nodes:       []membrane.PlanNode{{ID: "a", Op: "dump", Params: map[string]any{"target": "s3"}}},
			Constraints: map[string]any{"maintenance_window": "sunday"}},
			[]string{"plan_pg_16", "upgrad", "postgresql", "dump", "target", "s3", "maintenance_window", "sunday"}, nil},
		{"entity", &membrane.EntityPayload{CanonicalName: "Priya Raman", PrimaryType: "person", Types: []string{"engineer"},
			Aliases: []membrane.EntityAlias{{Value: "priya.r"}}, Identifiers: []membrane.EntityIdentifier{{Namespace: "github", Value: "praman"}},
			Summary: "on call for billing"},
			[]string{"priya", "raman", "person", "engin", "priya_r", "github", "praman", "call", "bill"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			terms := strings.Fields(membrane.SearchTerms(tt.payload))
			for _, w := range tt.want {
				if !slices.Contains(terms, w) {
					t.Errorf("terms %q lack %q", terms, w)
				}
			}
			for _, w := range tt.absent {
				if slices.Contains(terms, w) {
					t.Errorf("terms %q have %q", terms, w)
				}
			}
			if again := strings.Fields(membrane.SearchTerms(tt.payload)); !reflect.DeepEqual(again, terms) {
				t.Errorf("terms are not deterministic: %q then %q", terms, again)
			}
		})
	}
}
