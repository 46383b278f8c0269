package neo4j_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// writerAt is a writer with ceiling sens over scopes.
func writerAt(sens membrane.Sensitivity, scopes ...string) membrane.Trust {
	return membrane.Trust{Principal: membrane.Principal{Actor: "writer-" + string(sens), Role: membrane.RoleWriter, MaxSensitivity: sens, Scopes: scopes},
		Ceiling: sens.Level(), Scopes: scopes}
}

// captureProject captures, as trust, an event of sensitivity sens in scope
// that names the project name (with aliases), and returns the ids of the
// entities its primary record mentions.
func captureProject(t *testing.T, db *neo4j.DB, trust membrane.Trust, scope string, sens membrane.Sensitivity, name string, aliases ...string) []string {
	t.Helper()
	project := map[string]any{"name": name}
	if len(aliases) > 0 {
		as := make([]any, len(aliases))
		for i, a := range aliases {
			as[i] = a
		}
		project["aliases"] = as
	}
	c, err := membrane.DefaultPolicy().BuildCapture(membrane.CaptureInput{Source: "agent", Scope: &scope, Sensitivity: &sens,
		Content: map[string]any{"project": project, "note": "weekly sync"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Capture(membrane.NewContextWithTrust(t.Context(), trust), nil, c, trust.Principal.Actor)
	if err != nil {
		t.Fatalf("capture as %s: %v", trust.Principal.Actor, err)
	}
	var out []string
	for _, e := range res.Edges {
		if e.Predicate == membrane.PredMentions && e.SourceID == res.Primary.ID {
			out = append(out, e.TargetID)
		}
	}
	return out
}

// plaintextAnywhere returns where any of needles (lower case) occurs in the
// database, read directly as someone holding its files would: every
// property of every node and relationship (strings and lists of them),
// and every full-text index queried for each needle as a whole name and as
// a word.
func plaintextAnywhere(t *testing.T, needles ...string) []string {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	// One pass over every property of the database (it is shared by every
	// test and large: a pass takes seconds), all needles at once.
	var out []string
	res, err := driver.ExecuteQuery(t.Context(), drv, `
		CALL () {
		  MATCH (n) UNWIND keys(n) AS k RETURN 'node ' + labels(n)[0] + '.' + k AS at, n[k] AS v
		  UNION ALL
		  MATCH ()-[n]->() UNWIND keys(n) AS k RETURN 'relationship ' + type(n) + '.' + k AS at, n[k] AS v
		}
		WITH at, CASE WHEN v IS :: LIST<ANY> THEN [x IN v | toLower(toString(x))] ELSE [toLower(toString(v))] END AS texts
		UNWIND $needles AS needle
		WITH at, needle WHERE any(x IN texts WHERE x CONTAINS needle)
		RETURN DISTINCT needle + ' in ' + at`, map[string]any{"needles": needles}, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Records {
		out = append(out, r.Values[0].(string))
	}
	res, err = driver.ExecuteQuery(t.Context(), drv, `SHOW FULLTEXT INDEXES YIELD name, entityType WHERE entityType = 'NODE' RETURN name`,
		nil, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Records {
		index := r.Values[0].(string)
		for _, needle := range needles {
			for _, lq := range []string{`"` + needle + `"`, strings.Fields(needle)[0]} {
				hits, err := driver.ExecuteQuery(t.Context(), drv, `CALL db.index.fulltext.queryNodes($index, $q) YIELD node RETURN count(node)`,
					map[string]any{"index": index, "q": lq}, driver.EagerResultTransformer)
				if err != nil {
					t.Fatal(err)
				}
				if n := hits.Records[0].Values[0].(int64); n > 0 {
					out = append(out, needle+" in index "+index)
				}
			}
		}
	}
	return out
}

// TestSealedEntityNamesAtRest: a sealed (high) entity's name and aliases
// are nowhere in the database in clear, neither after its capture nor
// after a restart (a second store over the same database running the
// start-up migrations, which once wrote them in clear into Entity.terms);
// captures are resolved to it through its keyed blind names only for
// callers who see it in full: a low or medium writer naming it gets an
// entity of its own, a high writer is linked to it, before and after the
// restart.
func TestSealedEntityNamesAtRest(t *testing.T) {
	neo4jtest.DB(t)
	// The random end of a UUIDv7 (its start is the time: two processes
	// started in the same minute would share it).
	id := membrane.NewID()
	suffix := strings.ToLower(id[len(id)-12:])
	key := neo4jtest.SealKey("ent-"+suffix, 21)
	scope, first := neo4jtest.SealedScope(t, []membrane.SealKey{key}, key.ID)
	name, alias := "Zephyrine Vault "+suffix, "zv-"+suffix
	needles := []string{strings.ToLower(name), alias}
	high := membrane.SensitivityHigh
	got := captureProject(t, first, writerAt(high, scope), scope, high, name, alias)
	if len(got) != 1 {
		t.Fatalf("the high capture mentions %v", got)
	}
	hidden := got[0]
	if p := nodeProps(t, hidden); p["encrypted"] != true {
		t.Fatalf("the high entity is not sealed: %v", p)
	}
	// Resolved for a high writer through the blind names before the
	// restart (the scan below, after it, covers what the capture wrote).
	if got := captureProject(t, first, writerAt(high, scope), scope, high, strings.ToUpper(name)); !slices.Equal(got, []string{hidden}) {
		t.Fatalf("a high capture naming the entity mentions %v, want %v", got, []string{hidden})
	}

	// The restart: a second store starts over the database as this
	// version wrote it.
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	second := neo4jtest.OpenSealing(t, []membrane.SealKey{key}, key.ID)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	if err := second.Start(ctx, true); err != nil {
		t.Fatal(err)
	}
	if p := nodeProps(t, hidden); p["terms"] != nil || p["blindNames"] == nil {
		t.Fatalf("after a restart: terms %v, blind names %v", p["terms"], p["blindNames"])
	}
	if where := plaintextAnywhere(t, needles...); len(where) > 0 {
		t.Fatalf("after the restart, sealed names in clear: %v", where)
	}
	tests := []struct {
		name   string
		trust  membrane.Trust
		sens   membrane.Sensitivity
		linked bool
	}{
		{"low writer", writerAt(membrane.SensitivityLow, scope), membrane.SensitivityLow, false},
		{"medium writer (sees it redacted)", writerAt(membrane.SensitivityMedium, scope), membrane.SensitivityMedium, false},
		{"high writer by alias", writerAt(high, scope), high, true},
		{"hyper writer", writerAt(membrane.SensitivityHyper, scope), membrane.SensitivityHyper, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := name
			if tt.name == "high writer by alias" {
				n = alias
			}
			got := captureProject(t, second, tt.trust, scope, tt.sens, n)
			if len(got) != 1 {
				t.Fatalf("mentions %v", got)
			}
			if linked := got[0] == hidden; linked != tt.linked {
				t.Fatalf("linked to the sealed entity: %v, want %v", linked, tt.linked)
			}
		})
	}

	// A key rotation: `membrane reseal` recomputes the blind names under
	// the new key, and a server holding only that key still resolves the
	// entity.
	newKey := neo4jtest.SealKey("ent-new-"+suffix, 22)
	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, key}, newKey.ID).Reseal(sys, key.ID); err != nil {
		t.Fatal(err)
	}
	if p := nodeProps(t, hidden); p["digestKeyId"] != newKey.ID || p["terms"] != nil {
		t.Fatalf("after reseal: digestKeyId %v, terms %v", p["digestKeyId"], p["terms"])
	}
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	if got := captureProject(t, newOnly, writerAt(high, scope), scope, high, name); !slices.Equal(got, []string{hidden}) {
		t.Fatalf("after reseal, with the new key only, a high capture mentions %v, want %v", got, []string{hidden})
	}

	// A replica of an earlier version (a rollback) writes the names back in
	// clear into Entity.terms: they are never used to link, even by a
	// caller who sees the entity (its blind names are removed here, so
	// that only the plaintext terms could link it).
	if _, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (e:Entity {id: $id}) SET e.terms = $terms REMOVE e.blindNames`,
		map[string]any{"id": hidden, "terms": needles}, driver.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	if err := newOnly.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := captureProject(t, newOnly, writerAt(membrane.SensitivityHyper, scope), scope, high, name); slices.Contains(got, hidden) {
		t.Fatalf("a capture linked to the sealed entity through plaintext terms an old replica wrote: %v", got)
	}
}
