package neo4j_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// planNode is one operator of an EXPLAIN plan with its children.
type planNode struct {
	operator, details string
	children          []planNode
}

// planTree copies an EXPLAIN plan into planNodes. It does not walk
// driver.Plan.Children: the driver (v5.28.4, a module on go 1.18) builds
// that slice from the address of its range variable, so every child it
// returns is the last one and the left side of every join and Apply is lost
// (an AntiSemiApply reads as its right side twice). It reads the plan the
// driver decoded (its unexported *db.Plan, whose fields are exported)
// through reflection instead, read-only.
func planTree(p driver.Plan) planNode {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("planTree: unexpected plan type %T", p))
	}
	inner := v.Elem().FieldByName("plan")
	if !inner.IsValid() || inner.Kind() != reflect.Pointer {
		panic(fmt.Sprintf("planTree: %T has no plan pointer; has the driver changed?", p))
	}
	return planValue(inner.Elem())
}

// planValue converts the driver's db.Plan struct value.
func planValue(v reflect.Value) planNode {
	n := planNode{operator: v.FieldByName("Operator").String()}
	if d := v.FieldByName("Arguments").MapIndex(reflect.ValueOf("Details")); d.IsValid() && d.Elem().Kind() == reflect.String {
		n.details = d.Elem().String()
	}
	children := v.FieldByName("Children")
	for i := range children.Len() {
		n.children = append(n.children, planValue(children.Index(i)))
	}
	return n
}

// String draws the plan one operator a line, children indented.
func (n planNode) String() string {
	var b strings.Builder
	var draw func(n planNode, depth int)
	draw = func(n planNode, depth int) {
		fmt.Fprintf(&b, "%s%s %s\n", strings.Repeat("  ", depth), n.operator, n.details)
		for _, c := range n.children {
			draw(c, depth+1)
		}
	}
	draw(n, 0)
	return b.String()
}

// explainTree is the EXPLAIN plan of s with TestCypherExplain's
// parameters.
func explainTree(t *testing.T, db *neo4j.DB, s explainStatement) planNode {
	t.Helper()
	if embedPluginMissing(t, db, s.text) {
		return planNode{} // nothing to plan it with: it reads no index, scans nothing
	}
	params, err := explainParams(s.file, s.text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := db.ExplainPlan(t.Context(), s.text, params)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return planTree(plan)
}

// allDetails appends the details of every operator of n.
func (n planNode) allDetails(out *[]string) {
	if n.details != "" {
		*out = append(*out, n.details)
	}
	for _, c := range n.children {
		c.allDetails(out)
	}
}

// scansPerRow returns the label and all-node scans that run once for each
// row of another operator: those on the right side of an Apply (EXISTS and
// COUNT subqueries, CALL subqueries, OPTIONAL MATCH after a MATCH, CALL {}
// IN TRANSACTIONS) or of a Cartesian product's rows. A statement with one
// reads the whole label once per row: quadratic in the store. The left
// side of each runs once and is not counted.
func scansPerRow(n planNode, perRow bool) []string {
	var out []string
	op := strings.TrimSuffix(n.operator, "@neo4j")
	if perRow && (op == "NodeByLabelScan" || op == "AllNodesScan" || op == "UnionNodeByLabelsScan" ||
		op == "IntersectionNodeByLabelsScan" || op == "DirectedRelationshipTypeScan" || op == "UndirectedRelationshipTypeScan") {
		out = append(out, op+" "+n.details)
	}
	for i, c := range n.children {
		rhs := i == 1 && (strings.HasSuffix(op, "Apply") || op == "CartesianProduct")
		out = append(out, scansPerRow(c, perRow || rhs)...)
	}
	return out
}

// TestPlanTree: the workaround reads both sides of a binary operator,
// which driver.Plan.Children does not (the left one is lost).
func TestPlanTree(t *testing.T) {
	db := neo4jtest.DB(t)
	plan, err := db.ExplainPlan(t.Context(),
		`MATCH (a:AuditEntry {id: $id}) WHERE NOT EXISTS { MATCH (m:Memory {id: a.recordId}) } RETURN a`, map[string]any{"id": "x"})
	if err != nil {
		t.Fatal(err)
	}
	tree := planTree(plan)
	var details []string
	tree.allDetails(&details)
	all := strings.Join(details, "\n")
	for _, want := range []string{"AuditEntry(id)", "Memory(id)"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan misses %s:\n%s", want, tree)
		}
	}
}

// smallLabels are the labels a statement (by its cypher/ file) may scan
// per row because they hold a handful of nodes whatever the store's size.
var smallLabels = map[string]string{
	// Unsequenced marks the audit entries committed since the sequencer's
	// last tick, which removes the label (event_sequence); the check reads
	// at most one node.
	"event_head":     "Unsequenced",
	"event_sequence": "Unsequenced",
	// One lease per job and scope restriction.
	"job_runs_abandon": "JobLease",
}

// TestNoScanPerRow: no statement the store runs plans a label scan (or a
// scan of every node or relationship of a type) once per row of another
// operator. Such a plan costs the whole label for each row: the orphan
// audit check (invariants_audits) looked up delete tombstones by recordId
// and action without a predicate on at, which the (recordId, at) index
// needs, and scanned every audit entry once per entry of the scope (a
// minute on CI's store after the load test). Whole-label scans that run
// once (a migration's pass over every entry) are left to TestIndexUse.
func TestNoScanPerRow(t *testing.T) {
	db := neo4jtest.DB(t)
	for _, s := range explainable() {
		if s.file == "schema" {
			continue
		}
		tree := explainTree(t, db, s)
		scans := slices.DeleteFunc(scansPerRow(tree, false), func(scan string) bool {
			label, ok := smallLabels[s.file]
			return ok && strings.HasPrefix(scan, "NodeByLabelScan ") && strings.HasSuffix(scan, ":"+label)
		})
		if len(scans) > 0 {
			t.Errorf("%s scans per row: %s\nplan:\n%s", s.name, strings.Join(slices.Compact(scans), "; "), tree)
		}
	}
}
