package gqlenum_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/codegen/config"
	gqlast "github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/internal/gqlenum"
)

func TestGraphQLName(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"episodic", "EPISODIC"},
		{"plan_graph", "PLAN_GRAPH"},
		{"createdAt", "CREATED_AT"},
		{"removed_edge_out", "REMOVED_EDGE_OUT"},
		{"step2Done", "STEP2_DONE"},
		{"HTTPServer", "HTTPSERVER"},
		{"", ""},
	} {
		if got := gqlenum.GraphQLName(tc.value); got != tc.want {
			t.Errorf("GraphQLName(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}
}

// checked type-checks one file of package p (no imports).
func checked(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestConstants(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		want    map[string]string
		wantErr string
	}{
		{
			name: "exported string constants of the type only",
			src: `package p
type Kind string
type Other string
const (
	KindA Kind = "alpha"
	KindAB Kind = "alphaBeta"
	kindHidden Kind = "hidden"
	OtherA Other = "gamma"
	Untyped = "delta"
)`,
			want: map[string]string{"ALPHA": "KindA", "ALPHA_BETA": "KindAB"},
		},
		{
			name: "two constants that spell one name",
			src: `package p
type Kind string
const (
	KindA Kind = "alpha_beta"
	KindB Kind = "alphaBeta"
)`,
			wantErr: "both spell ALPHA_BETA",
		},
		{
			name:    "no such type",
			src:     "package p\n",
			wantErr: "has no type Kind",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gqlenum.Constants(checked(t, tc.src), "Kind")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one that says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v (%v), want %v", got, err, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// repoConfig loads the repository's gqlgen.yml as `go generate` does, up to
// the point where plugins mutate it.
func repoConfig(t *testing.T) *config.Config {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	t.Chdir(filepath.Join(filepath.Dir(here), "..", ".."))
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadSchema(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Init(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestPluginBindsRepoEnums binds the schema's enums as generation does:
// every value of every enum gets a constant, the rule's exceptions included.
func TestPluginBindsRepoEnums(t *testing.T) {
	cfg := repoConfig(t)
	if err := (gqlenum.Plugin{}).MutateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	const m = "github.com/membrane/membrane/internal/membrane."
	for _, tc := range []struct{ enum, value, want string }{
		{"MemoryType", "PLAN_GRAPH", m + "TypePlanGraph"},
		{"RecordOrderField", "CREATED_AT", m + "OrderCreatedAt"},
		{"JobOutcome", "TIMEOUT", m + "JobTimedOut"},
		{"AuditRefRole", "REMOVED_EDGE_OUT", m + "RefEdgeOut"},
		{"RelationDirection", "OUT", m + "DirOut"},
		// Listed in gqlgen.yml: left as it is.
		{"LineageDirection", "ANCESTORS", m + "DirOut"},
	} {
		if got := cfg.Models[tc.enum].EnumValues[tc.value].Value; got != tc.want {
			t.Errorf("%s.%s bound to %q, want %q", tc.enum, tc.value, got, tc.want)
		}
	}
	for name, def := range cfg.Schema.Types {
		if def.Kind != gqlast.Enum || strings.HasPrefix(name, "__") || len(cfg.Models[name].Model) == 0 {
			continue
		}
		if got, want := len(cfg.Models[name].EnumValues), len(def.EnumValues); got != want {
			t.Errorf("%s: %d of %d values bound", name, got, want)
		}
	}
}

func TestPluginRejectsUnspelledValue(t *testing.T) {
	cfg := repoConfig(t)
	def := cfg.Schema.Types["MemoryType"]
	def.EnumValues = append(def.EnumValues, &gqlast.EnumValueDefinition{Name: "SENSORY"})
	err := (gqlenum.Plugin{}).MutateConfig(cfg)
	if err == nil || !strings.Contains(err.Error(), "SENSORY") {
		t.Fatalf("err %v, want one naming SENSORY", err)
	}
}
