package config_test

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/config"
)

// readmeRow is one row of README.md's configuration table.
type readmeRow struct {
	line              int
	keys, envs, flags []string
	defaultText       string
	defaultTokens     []string
}

var (
	backticked = regexp.MustCompile("`([^`]*)`")
	envName    = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// readmeTable parses the table under "## Configuration" in README.md:
// columns YAML key, environment, flag, default; each a cell whose
// backticked words are the keys, variables, flags and default values.
func readmeTable(t *testing.T) []readmeRow {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, "## Configuration")
	if start < 0 {
		t.Fatal("README.md has no ## Configuration section")
	}
	var rows []readmeRow
	inTable := false
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if !inTable {
			if want := []string{"YAML key", "environment", "flag", "default"}; !slices.Equal(cells, want) {
				t.Fatalf("README.md:%d: table columns %q, want %q", i+1, cells, want)
			}
			inTable = true
			i++ // the |---| line
			continue
		}
		if len(cells) != 4 {
			t.Fatalf("README.md:%d: %d cells, want 4: %s", i+1, len(cells), line)
		}
		r := readmeRow{line: i + 1, defaultText: cells[3]}
		for _, k := range ticks(cells[0]) {
			r.keys = append(r.keys, expandBraces(k)...)
		}
		for _, e := range ticks(cells[1]) {
			if envName.MatchString(e) {
				r.envs = append(r.envs, e)
			}
		}
		for _, f := range ticks(cells[2]) {
			r.flags = append(r.flags, strings.TrimPrefix(f, "-"))
		}
		r.defaultTokens = ticks(cells[3])
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("README.md: no configuration table")
	}
	return rows
}

func ticks(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// expandBraces expands one {a,b} group: x.{a,b} is x.a and x.b.
func expandBraces(k string) []string {
	open, end := strings.Index(k, "{"), strings.Index(k, "}")
	if open < 0 || end < open {
		return []string{k}
	}
	var out []string
	for _, alt := range strings.Split(k[open+1:end], ",") {
		out = append(out, k[:open]+alt+k[end+1:])
	}
	return out
}

// documents reports whether one of tokens states value v: the same
// duration, number, boolean or text.
func documents(tokens []string, v any) bool {
	for _, tok := range tokens {
		var ok bool
		switch v := v.(type) {
		case time.Duration:
			d, err := time.ParseDuration(tok)
			ok = err == nil && d == v
		case int:
			n, err := strconv.Atoi(tok)
			ok = err == nil && n == v
		case int64:
			n, err := strconv.ParseInt(tok, 10, 64)
			ok = err == nil && n == v
		case float64:
			x, err := strconv.ParseFloat(tok, 64)
			ok = err == nil && x == v
		case bool:
			x, err := strconv.ParseBool(tok)
			ok = err == nil && x == v
		case string:
			ok = tok == v
		default:
			ok = tok == fmt.Sprint(v)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestREADMEConfigurationTable: every setting has its row in README.md's
// configuration table, naming its environment variable and flag and stating
// its default (a setting whose default is the zero value may describe it in
// words), and every key, variable and flag of the table is a setting's.
// A new setting cannot be added without its row.
func TestREADMEConfigurationTable(t *testing.T) {
	rows := readmeTable(t)
	settings := config.Settings()
	byKey := map[string]readmeRow{}
	for _, r := range rows {
		for _, k := range r.keys {
			if _, dup := byKey[k]; dup {
				t.Errorf("README.md:%d: key %s has two rows", r.line, k)
			}
			byKey[k] = r
		}
	}
	keys, envs, flags := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		keys[s.Key], envs[s.Env], flags[s.Flag] = true, true, true
		r, ok := byKey[s.Key]
		if !ok {
			t.Errorf("setting %s (env %q) has no row in README.md's configuration table", s.Key, s.Env)
			continue
		}
		if s.Env != "" && !slices.Contains(r.envs, s.Env) {
			t.Errorf("README.md:%d: %s: environment column does not name %s", r.line, s.Key, s.Env)
		}
		if s.Flag != "" && !slices.Contains(r.flags, s.Flag) {
			t.Errorf("README.md:%d: %s: flag column does not name -%s", r.line, s.Key, s.Flag)
		}
		if s.Default != nil && !reflect.ValueOf(s.Default).IsZero() && !documents(r.defaultTokens, s.Default) {
			t.Errorf("README.md:%d: %s: default column %q does not state the default %v", r.line, s.Key, r.defaultText, s.Default)
		}
	}
	for _, r := range rows {
		for _, k := range r.keys {
			if !keys[k] {
				t.Errorf("README.md:%d: %s is not a setting", r.line, k)
			}
		}
		for _, e := range r.envs {
			if !envs[e] {
				t.Errorf("README.md:%d: %s is not a setting's environment variable", r.line, e)
			}
		}
		for _, f := range r.flags {
			if !flags[f] {
				t.Errorf("README.md:%d: -%s is not a setting's flag", r.line, f)
			}
		}
	}
}

// TestSettings: Settings reads Config's tags: keys dotted, variables under
// a map after the map's prefix, defaults Default's (none under a map, whose
// defaults are its entries); keys and variables are unique, and only string
// settings have flags (Read sets flags as strings).
func TestSettings(t *testing.T) {
	d := config.Default()
	tests := []struct {
		key, env, flag string
		def            any
	}{
		{"listen", "MEMBRANE_LISTEN", "listen", d.Listen},
		{"neo4j.uri", "NEO4J_URI", "neo4j-uri", d.Neo4j.URI},
		{"neo4j.tx_timeout", "", "", d.Neo4j.TxTimeout},
		{"limits.complexity", "MEMBRANE_MAX_COMPLEXITY", "", d.Limits.Complexity},
		{"limits.roles.<role>.depth", "MEMBRANE_ADMIN_MAX_DEPTH", "", nil},
		{"limits.roles.<role>.subscriptions_per_principal", "MEMBRANE_ADMIN_MAX_SUBSCRIPTIONS_PER_PRINCIPAL", "", nil},
		{"graphiql", "MEMBRANE_GRAPHIQL", "", d.GraphiQL},
		{"explorer", "MEMBRANE_EXPLORER", "", d.Explorer},
		{"migrate_at_start", "MEMBRANE_MIGRATE_AT_START", "", d.MigrateAtStart},
		{"encryption.keys", "MEMBRANE_ENCRYPTION_KEY", "", d.Encryption.Keys},
		{"jobs.idempotency_retention", "MEMBRANE_JOBS_IDEMPOTENCY_RETENTION", "", 7 * 24 * time.Hour},
	}
	byKey := map[string]config.Setting{}
	envs := map[string]bool{}
	for _, s := range config.Settings() {
		if _, dup := byKey[s.Key]; dup {
			t.Errorf("key %s twice", s.Key)
		}
		byKey[s.Key] = s
		if s.Env != "" && envs[s.Env] {
			t.Errorf("variable %s twice", s.Env)
		}
		envs[s.Env] = true
		// Read applies every variable of a map's settings to the admin's
		// entry of limits.roles: no other map may have variables.
		if strings.Contains(s.Key, "<") && s.Env != "" && !strings.HasPrefix(s.Key, "limits.roles.<role>.") {
			t.Errorf("%s: variable %s under a map other than limits.roles", s.Key, s.Env)
		}
		if _, isString := s.Default.(string); s.Flag != "" && !isString {
			t.Errorf("%s: flag -%s on a setting that is not a string", s.Key, s.Flag)
		}
	}
	if _, ok := byKey["otel_from_env"]; ok || len(byKey) < 70 {
		t.Errorf("%d settings: %v", len(byKey), byKey)
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			s, ok := byKey[tt.key]
			if !ok {
				t.Fatal("no such setting")
			}
			if s.Env != tt.env || s.Flag != tt.flag || !reflect.DeepEqual(s.Default, tt.def) {
				t.Fatalf("env %q flag %q default %#v, want %q %q %#v", s.Env, s.Flag, s.Default, tt.env, tt.flag, tt.def)
			}
		})
	}
}
