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
// contest, one supersede and the lineage of a 100-deep chain as the server runs them (through the
// membrane services, with the bench's inputs: a semantic fact with
// evidence, a contest by an external reference), every statement run with
// PROFILE against the real Neo4j after a warm-up of each, so plans are
// cached. With -v it reports, per operation, the transactions and the
// statements it cost, and per statement its db hits and rows by operator
// and the indexes its writes update (docs/BENCHMARKS.md, "Revisions"):
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -count=1 -v -run TestProfileSmallOperations ./internal/neo4j/
//
// It asserts the statement and transaction counts, so that an extra round
// trip on these paths fails here.
func TestProfileSmallOperations(t *testing.T) {
	db := neo4jtest.Open(t)
	scope := neo4jtest.Scope(t)
	svc, ctx, benchFact := benchServices(t.Context(), db, scope)
	var pool []string
	for i := range 7 {
		r, err := svc.Ingest.CreateRecord(ctx, benchFact(fmt.Sprint("pool-", i)), ptr("bench"), nil)
		if err != nil {
			t.Fatal(err)
		}
		pool = append(pool, r.ID)
	}
	// A 100-deep supersede chain for the lineage read, head last.
	chain := []string{pool[6]}
	for i := range 100 {
		r, err := svc.Revise.Supersede(ctx, chain[i], benchFact(fmt.Sprint("chain-", i)), membrane.RevisionArgs{Actor: ptr("bench")})
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, r.ID)
	}
	lineageQ, err := membrane.NewLineageQuery(ptr(membrane.DirOut), nil, ptr(int64(100)), ptr(int64(200)), nil)
	if err != nil {
		t.Fatal(err)
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
		{"contest", struct{ tx, statements int }{2, 2}, func(ctx context.Context, i int) error {
			_, err := svc.Revise.Contest(ctx, pool[i], fmt.Sprint("ticket-", i), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"supersede", struct{ tx, statements int }{2, 2}, func(ctx context.Context, i int) error {
			_, err := svc.Revise.Supersede(ctx, pool[i+2], benchFact(fmt.Sprint("successor-", i)), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"lineage 100-deep", struct{ tx, statements int }{1, 1}, func(ctx context.Context, i int) error {
			l, err := svc.Read.Lineage(ctx, chain[100], lineageQ)
			if err == nil && len(l.Nodes) != 101 {
				err = fmt.Errorf("lineage has %d nodes, want 101", len(l.Nodes))
			}
			return err
		}},
		{"supersede with an idempotency key", struct{ tx, statements int }{2, 2}, func(ctx context.Context, i int) error {
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

// benchServices returns the membrane services over db as the server wires
// them (the default policy), ctx with system trust, and the bench's fact
// in scope: a semantic fact with evidence, as cmd/bench writes them.
func benchServices(ctx context.Context, db *neo4j.DB, scope string) (*membrane.Services, context.Context, func(subject string) membrane.RecordInput) {
	svc := membrane.NewServices(membrane.Stores{Records: db, Revisions: db, Lineages: db},
		membrane.ServiceOptions{Policy: membrane.DefaultPolicy()})
	fact := func(subject string) membrane.RecordInput {
		return membrane.RecordInput{Type: membrane.TypeSemantic, Scope: ptr(scope),
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: "runs_on", Object: "node " + subject,
				Evidence: []membrane.EvidenceRef{{SourceType: "bench", SourceID: "bench"}}}}}
	}
	return svc, membrane.NewContextWithTrust(ctx, membrane.SystemTrust("bench")), fact
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

// indexNeeds names, for each schema index that no constraint owns, the
// statement (cypher/NAME.cypher, any variant of a template) that needs it:
// every index costs every write that touches it, so each must earn it.
// Whether a plan reads it at a given moment depends on the database's
// statistics (an ordering index on a small database, a session index on
// one without sessions), so the test checks the named statement's text,
// and reports the plans with -v.
var indexNeeds = map[string]string{
	"audit_at":                 "audit_page",        // auditLog pages by time, walked in order
	"audit_record_at":          "audit_for_records", // a record's audit trail
	"audit_seq":                "events",            // the change feed reads by sequence number
	"competence_skill_key":     "find_competences",  // consolidation's duplicate skills
	"entity_blind_names":       "entity_lookup",     // sealed entities by keyed name
	"entity_name_terms":        "entity_lookup",     // entities by name in a scope
	"idempotency_created_at":   "idempotency_expire",
	"memory_blind":             "retrieve_candidates", // its HITS fragment retrieve_hits_blind
	"memory_confidence":        "records_page",        // orderBy CONFIDENCE
	"memory_created_at":        "records_page",        // orderBy CREATED_AT, the default
	"memory_embedding_384":     "retrieve_candidates", // retrieve_hits_vector
	"memory_salience":          "records_page",        // orderBy SALIENCE
	"memory_scope":             "records_page",        // a scoped page
	"memory_scope_created_at":  "records_page_scoped", // a scoped page by creation time, walked in order
	"memory_sensitivity_level": "records_page",        // an unscoped page, gated by level
	"memory_session":           "session_link",        // the previous episode of a session
	"memory_status":            "duplicate_facts",
	"memory_terms":             "retrieve_candidates", // retrieve_hits_text
	"memory_updated_at":        "records_page",        // orderBy UPDATED_AT
	"semantic_fact_key":        "find_facts",
}

// TestIndexUse: every schema index is owned by a constraint (which
// enforces an invariant) or named in indexNeeds with a statement that
// filters or orders on its properties (or queries it by name), and
// indexNeeds names no index the schema lacks. With -v it reports each
// index with the statements whose plans read it now (EXPLAIN of every
// statement the store runs, with TestCypherExplain's parameters: a seek,
// scan or ordered walk; a full-text or vector index by the name the
// statement queries it by).
func TestIndexUse(t *testing.T) {
	db := neo4jtest.DB(t)
	// The vector index exists once a test or the server has embeddings to
	// search: made here so that the check does not depend on test order.
	if err := db.EnsureVectorIndex(t.Context(), testDims); err != nil {
		t.Fatal(err)
	}
	indexes := schemaIndexes(t)
	owned := map[string]bool{}
	for _, r := range raw(t, `SHOW CONSTRAINTS YIELD ownedIndex WHERE ownedIndex IS NOT NULL RETURN ownedIndex`, nil) {
		owned[r.Values[0].(string)] = true
	}
	statements := explainable()
	used := map[string][]string{}
	for _, s := range statements {
		if s.file == "schema" {
			continue
		}
		var details []string
		explainTree(t, db, s).allDetails(&details)
		all := strings.Join(details, "\n")
		for _, ix := range indexes {
			ref := fmt.Sprintf(":%s(%s)", ix.label, strings.Join(ix.props, ", "))
			if strings.Contains(all, ref) || strings.Contains(s.text, "'"+ix.name+"'") {
				used[ix.name] = append(used[ix.name], s.name)
			}
		}
	}
	// The vector index's name carries its dimensions (memory_embedding_N).
	named := map[string]bool{}
	for _, ix := range indexes {
		named[ix.name] = true
		names := slices.Compact(used[ix.name])
		t.Logf("%-26s %-8s %s(%s): %d plans: %s", ix.name, ix.kind, ix.label, strings.Join(ix.props, ", "), len(names), strings.Join(names, ", "))
		if owned[ix.name] {
			continue
		}
		need, ok := indexNeeds[ix.name]
		if !ok {
			t.Errorf("index %s: owned by no constraint and needed by no statement in indexNeeds", ix.name)
			continue
		}
		mentions := func(text string) bool {
			if strings.Contains(text, ix.name) || strings.Contains(text, "memory_embedding") && ix.kind == "VECTOR" {
				return true
			}
			for _, p := range ix.props {
				if !strings.Contains(text, p) {
					return false
				}
			}
			return true
		}
		if !slices.ContainsFunc(statements, func(s explainStatement) bool { return s.file == need && mentions(s.text) }) {
			t.Errorf("index %s: indexNeeds names %s, no variant of which reads %s(%s)", ix.name, need, ix.label, strings.Join(ix.props, ", "))
		}
	}
	for name := range indexNeeds {
		if !named[name] {
			t.Errorf("indexNeeds names %s, which the schema does not have", name)
		}
	}
}
