package graph_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestDashboardQueriesFitReaderLimits runs the typical dashboard queries
// of docs/dashboards.md as a reader, under the default limits, over a
// lineage whose records have long audit trails.
func TestDashboardQueriesFitReaderLimits(t *testing.T) {
	scope := neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClient(t, reader)
	rd := c.as(reader.Actor)
	first := c.Create(scope, "SEMANTIC", gqltest.Fact("v1"), nil)
	// More audit entries than a listed page holds.
	for range graph.MaxListedAuditPage + 2 {
		c.Do(`mutation($id: ID!) { reinforce(id: $id, rationale: "used") { id } }`, map[string]any{"id": first}, nil)
	}
	var sup struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": first, "in": factInput(scope, "v2")}, &sup)

	raw, err := os.ReadFile("../docs/dashboards.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := graphqlBlocks(string(raw))
	if len(blocks) < 2 {
		t.Fatalf("found %d graphql blocks in docs/dashboards.md", len(blocks))
	}
	// The query: a deep audit page on every node of a lineage.
	deep := strings.Replace(blocks[0], "auditLog(first: 20,", "auditLog(first: 500,", 1)
	for i, q := range append(blocks, deep) {
		t.Run(fmt.Sprintf("block %d", i+1), func(t *testing.T) {
			r := rd.Post(map[string]any{"query": q, "variables": map[string]any{"id": sup.Supersede.ID, "roots": []string{sup.Supersede.ID}}})
			if len(r.Errors) > 0 {
				t.Fatalf("errors: %.1000s", r.Body)
			}
			c, _ := r.Extensions["complexity"].(map[string]any)
			if c == nil || c["cost"].(float64) > c["limit"].(float64) || c["limit"].(float64) != 50_000 {
				t.Fatalf("extensions.complexity = %v", c)
			}
			t.Logf("cost %v", c["cost"])
			if !strings.Contains(string(r.Data), first) {
				t.Fatalf("the lineage lacks the superseded record: %.1000s", r.Data)
			}
		})
	}
	t.Run("a listed record's audit page holds at most MaxListedAuditPage", func(t *testing.T) {
		var out struct {
			Lineage struct {
				Nodes []struct {
					Record struct {
						ID       string
						AuditLog struct {
							Nodes    []struct{ Action string }
							PageInfo struct{ HasNextPage bool }
						}
					}
				}
			}
			Record struct {
				AuditLog struct{ Nodes []struct{ Action string } }
			}
		}
		rd.Do(`query($id: ID!, $old: ID!) { lineage(id: $id, direction: BOTH) { nodes { record { id auditLog(first: 500) { nodes { action } pageInfo { hasNextPage } } } } }
		  record(id: $old) { auditLog(first: 500) { nodes { action } } } }`, map[string]any{"id": sup.Supersede.ID, "old": first}, &out)
		i := slices.IndexFunc(out.Lineage.Nodes, func(n struct {
			Record struct {
				ID       string
				AuditLog struct {
					Nodes    []struct{ Action string }
					PageInfo struct{ HasNextPage bool }
				}
			}
		}) bool {
			return n.Record.ID == first
		})
		if i < 0 || len(out.Lineage.Nodes) != 2 {
			t.Fatalf("lineage: %+v", out.Lineage)
		}
		if a := out.Lineage.Nodes[i].Record.AuditLog; len(a.Nodes) != graph.MaxListedAuditPage || !a.PageInfo.HasNextPage {
			t.Fatalf("listed page: %d entries, hasNextPage %v", len(a.Nodes), a.PageInfo.HasNextPage)
		}
		// create, the reinforcements and the supersede: whole when read alone.
		if n := len(out.Record.AuditLog.Nodes); n != graph.MaxListedAuditPage+4 {
			t.Fatalf("the record alone: %d entries", n)
		}
	})
}

func TestAuditLogOrder(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	id := c.Create(scope, "SEMANTIC", gqltest.Fact("ordered"), nil)
	for i := range 3 {
		c.Do(`mutation($id: ID!, $r: String) { reinforce(id: $id, rationale: $r) { id } }`, map[string]any{"id": id, "r": fmt.Sprint("r", i)}, nil)
	}
	type page struct {
		Nodes    []struct{ ID, Rationale string }
		PageInfo struct {
			HasNextPage bool
			EndCursor   string
		}
	}
	// read pages through the whole trail, two entries at a time, by one of
	// the two fields, in order ("" for the default).
	read := func(field, order string) []string {
		var ids []string
		after := any(nil)
		for range 10 {
			var p page
			switch field {
			case "record":
				var out struct{ Record struct{ AuditLog page } }
				c.Do(`query($id: ID!, $after: String, $o: AuditOrder) { record(id: $id) { auditLog(first: 2, after: $after, order: $o) { nodes { id rationale } pageInfo { hasNextPage endCursor } } } }`,
					map[string]any{"id": id, "after": after, "o": orNil(order)}, &out)
				p = out.Record.AuditLog
			case "query":
				var out struct{ AuditLog page }
				c.Do(`query($id: ID!, $after: String, $o: AuditOrder) { auditLog(filter: {recordId: $id}, first: 2, after: $after, order: $o) { nodes { id rationale } pageInfo { hasNextPage endCursor } } }`,
					map[string]any{"id": id, "after": after, "o": orNil(order)}, &out)
				p = out.AuditLog
			}
			for _, n := range p.Nodes {
				ids = append(ids, n.ID)
			}
			if !p.PageInfo.HasNextPage {
				return ids
			}
			after = p.PageInfo.EndCursor
		}
		t.Fatalf("%s %s: no last page", field, order)
		return nil
	}
	for _, field := range []string{"record", "query"} {
		t.Run(field, func(t *testing.T) {
			def, oldest, newest := read(field, ""), read(field, "OLDEST_FIRST"), read(field, "NEWEST_FIRST")
			if len(def) != 4 || !slices.Equal(def, oldest) {
				t.Fatalf("default %v, OLDEST_FIRST %v", def, oldest)
			}
			slices.Reverse(newest)
			if !slices.Equal(newest, oldest) {
				t.Fatalf("NEWEST_FIRST reversed %v, OLDEST_FIRST %v", newest, oldest)
			}
		})
	}
	t.Run("unknown order", func(t *testing.T) {
		c.Fail("BAD_USER_INPUT", `query($id: ID!, $o: AuditOrder) { record(id: $id) { auditLog(order: $o) { nodes { id } } } }`, map[string]any{"id": id, "o": "SIDEWAYS"})
	})
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
