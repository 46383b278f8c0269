package neo4j_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestProfileSmallOperations profiles one point read (record by id), one
// contest and one supersede as the server runs them (through the
// membrane services, with the bench's inputs: a semantic fact with
// evidence, a contest by an external reference), every statement run with
// PROFILE against the real Neo4j after a warm-up of each, so plans are
// cached. With -v it reports, per operation, the transactions and the
// statements it cost, and per statement its db hits and rows by operator
// and the indexes its writes update (docs/BENCHMARKS.md, "Where the time
// goes: one point read and one revision (issue 13)"):
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -count=1 -v -run TestProfileSmallOperations ./internal/neo4j/
//
// It asserts the statement and transaction counts, so that an extra round
// trip on these paths fails here.
func TestProfileSmallOperations(t *testing.T) {
	db := neo4jtest.Open(t)
	scope := neo4jtest.Scope(t)
	svc := membrane.NewServices(membrane.Stores{Records: db, Revisions: db, Lineages: db},
		membrane.ServiceOptions{Policy: membrane.DefaultPolicy()})
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("bench"))
	benchFact := func(subject string) membrane.RecordInput {
		return membrane.RecordInput{Type: membrane.TypeSemantic, Scope: ptr(scope),
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: "runs_on", Object: "node " + subject,
				Evidence: []membrane.EvidenceRef{{SourceType: "bench", SourceID: "bench"}}}}}
	}
	var pool []string
	for i := range 6 {
		r, err := svc.Ingest.CreateRecord(ctx, benchFact(fmt.Sprint("pool-", i)), ptr("bench"), nil)
		if err != nil {
			t.Fatal(err)
		}
		pool = append(pool, r.ID)
	}
	ops := []struct {
		name string
		want struct{ tx, statements int }
		run  func(ctx context.Context, i int) error
	}{
		{"point read", struct{ tx, statements int }{1, 1}, func(ctx context.Context, i int) error {
			_, err := svc.Read.Record(ctx, pool[0], nil)
			return err
		}},
		{"contest", struct{ tx, statements int }{1, 2}, func(ctx context.Context, i int) error {
			_, err := svc.Revise.Contest(ctx, pool[i], fmt.Sprint("ticket-", i), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"supersede", struct{ tx, statements int }{1, 2}, func(ctx context.Context, i int) error {
			_, err := svc.Revise.Supersede(ctx, pool[i+2], benchFact(fmt.Sprint("successor-", i)), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"supersede with an idempotency key", struct{ tx, statements int }{1, 2}, func(ctx context.Context, i int) error {
			key := fmt.Sprint(scope, "-key-", i)
			_, err := svc.Revise.Supersede(ctx, pool[i+4], benchFact(fmt.Sprint("keyed-", i)), membrane.RevisionArgs{Actor: ptr("bench"), IdempotencyKey: &key})
			return err
		}},
	}
	indexes := schemaIndexes(t)
	for _, op := range ops {
		// Warm-up (plans cached), then the profiled run.
		if err := op.run(ctx, 0); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		var p neo4j.Profile
		tx := db.TxCount()
		if err := op.run(neo4j.WithProfile(ctx, &p), 1); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		txs, stmts := int(db.TxCount()-tx), p.Statements()
		total := int64(0)
		for _, s := range stmts {
			total += dbHits(s.Plan)
		}
		t.Logf("== %s: %d transaction(s), %d statement(s), %d db hits", op.name, txs, len(stmts), total)
		for _, s := range stmts {
			t.Logf("-- %s: %d db hits, %d rows; %s", statementName(s.Text), dbHits(s.Plan), s.Plan.Records(), counters(s.Counters))
			var lines []string
			operators(s.Plan, 1, &lines)
			for _, l := range lines {
				t.Log(l)
			}
			if idx := updatedIndexes(s, indexes); len(idx) > 0 {
				t.Logf("   index updates: %s", strings.Join(idx, ", "))
			}
		}
		if txs != op.want.tx || len(stmts) != op.want.statements {
			t.Errorf("%s: %d transactions and %d statements, want %d and %d", op.name, txs, len(stmts), op.want.tx, op.want.statements)
		}
	}
}

// statementName is the cypher/ file whose statement text is.
func statementName(text string) string {
	for _, n := range cypher.Names() {
		if cypher.Must(n) == text {
			return n
		}
	}
	return "(unnamed) " + strings.SplitN(text, "\n", 2)[0]
}

func dbHits(p driver.ProfiledPlan) int64 {
	n := p.DbHits()
	for _, c := range p.Children() {
		n += dbHits(c)
	}
	return n
}

// operators appends one line per operator of p, indented by depth, with
// its own db hits and rows and its details (index, predicate).
func operators(p driver.ProfiledPlan, depth int, out *[]string) {
	details, _ := p.Arguments()["Details"].(string)
	if len(details) > 110 {
		details = details[:110] + "…"
	}
	*out = append(*out, fmt.Sprintf("   %s%-28s hits %4d rows %3d  %s", strings.Repeat("  ", depth-1), strings.TrimSuffix(p.Operator(), "@neo4j"), p.DbHits(), p.Records(), details))
	for _, c := range p.Children() {
		operators(c, depth+1, out)
	}
}

func counters(c driver.Counters) string {
	var parts []string
	for _, kv := range []struct {
		k string
		v int
	}{{"nodes created", c.NodesCreated()}, {"relationships created", c.RelationshipsCreated()},
		{"properties set", c.PropertiesSet()}, {"labels added", c.LabelsAdded()}, {"labels removed", c.LabelsRemoved()}} {
		if kv.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", kv.k, kv.v))
		}
	}
	if len(parts) == 0 {
		return "no writes"
	}
	return strings.Join(parts, ", ")
}

// index is a schema index: its name, the one label it covers and its
// properties (a composite range index holds nodes that have all of
// them, a full-text one nodes that have any).
type index struct {
	name, label, kind string
	props             []string
}

func schemaIndexes(t *testing.T) []index {
	var out []index
	for _, r := range raw(t, `SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties
		WHERE entityType = 'NODE' AND labelsOrTypes IS NOT NULL RETURN name, type, labelsOrTypes[0], properties ORDER BY name`, nil) {
		var props []string
		for _, p := range r.Values[3].([]any) {
			props = append(props, p.(string))
		}
		out = append(out, index{r.Values[0].(string), r.Values[2].(string), r.Values[1].(string), props})
	}
	return out
}

// updatedIndexes names the node indexes that a write of apply_change (or
// another statement of its parameters: creates, updates, audits) updates:
// those of a created node's labels that hold its properties, those of an
// updated node's labels over a property it changes, and those of a new
// audit entry. The label and relationship-type lookup indexes, updated by
// every node and relationship created, are left out.
func updatedIndexes(s neo4j.ProfiledStatement, all []index) []string {
	seen := map[string]int{}
	touch := func(labels []string, props map[string]bool, created bool) {
		for _, ix := range all {
			if !slices.Contains(labels, ix.label) {
				continue
			}
			has := 0
			for _, p := range ix.props {
				if props[p] {
					has++
				}
			}
			if has > 0 && (!created || ix.kind == "FULLTEXT" || has == len(ix.props)) {
				seen[ix.name]++
			}
		}
	}
	keys := func(m any) map[string]bool {
		out := map[string]bool{}
		if mm, ok := m.(map[string]any); ok {
			for k, v := range mm {
				if v != nil {
					out[k] = true
				}
			}
		}
		return out
	}
	rows := func(name string) []map[string]any {
		v, _ := s.Params[name].([]map[string]any)
		return v
	}
	for _, c := range rows("creates") {
		props := keys(c["props"])
		props["id"] = true
		touch([]string{"Memory", fmt.Sprint(c["label"])}, props, true)
	}
	for _, u := range rows("updates") {
		// The type label of an updated record is not known here; its
		// indexes are the Semantic and Competence keys, which a revision
		// does not change.
		touch([]string{"Memory"}, keys(u["props"]), false)
	}
	for _, a := range rows("audits") {
		props := keys(a["props"])
		props["scope"], props["sensitivityLevel"], props["recordType"] = true, true, true
		touch([]string{"AuditEntry"}, props, true)
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(seen)) {
		if seen[n] > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", n, seen[n]))
		} else {
			out = append(out, n)
		}
	}
	return out
}

// TestIndexUse has Neo4j plan every statement the store runs (EXPLAIN, the
// statements and parameters of TestCypherExplain) and reports, with -v,
// each schema index with the statements whose plans read it (a seek, scan
// or ordered walk; a full-text or vector index by the name the statement
// queries it by). An index that no plan reads costs every write that
// touches it and serves no query.
func TestIndexUse(t *testing.T) {
	db := neo4jtest.DB(t)
	indexes := schemaIndexes(t)
	used := map[string][]string{}
	for _, s := range explainable() {
		if s.file == "schema" {
			continue
		}
		params, err := explainParams(s.file, s.text)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := db.ExplainPlan(t.Context(), s.text, params)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var details []string
		planDetails(plan, &details)
		all := strings.Join(details, "\n")
		for _, ix := range indexes {
			ref := fmt.Sprintf(":%s(%s)", ix.label, strings.Join(ix.props, ", "))
			if strings.Contains(all, ref) || strings.Contains(s.text, "'"+ix.name+"'") {
				used[ix.name] = append(used[ix.name], s.name)
			}
		}
	}
	for _, ix := range indexes {
		names := slices.Compact(used[ix.name])
		t.Logf("%-26s %-8s %s(%s): %d plans: %s", ix.name, ix.kind, ix.label, strings.Join(ix.props, ", "), len(names), strings.Join(names, ", "))
	}
}

func planDetails(p driver.Plan, out *[]string) {
	if d, ok := p.Arguments()["Details"].(string); ok {
		*out = append(*out, d)
	}
	for _, c := range p.Children() {
		planDetails(c, out)
	}
}
