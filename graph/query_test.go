package graph_test

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/membrane/membrane/internal/neo4jtest"
)

type listed struct {
	Records struct {
		Nodes []struct {
			ID         string
			Salience   float64
			Confidence float64
			CreatedAt  string
			Tags       []string
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
		TotalCount *int
	}
}

// seed creates n semantic records in scope with varied fields and returns
// them as stored.
func seed(t *testing.T, c *client, scope string, n int) []map[string]any {
	t.Helper()
	in := make([]any, n)
	for i := range in {
		sens := []string{"PUBLIC", "LOW", "MEDIUM"}[i%3]
		tags := []any{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		if i%5 == 0 {
			tags = append(tags, "five")
		}
		in[i] = map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": sens, "tags": tags,
			"salience": float64(i%4) / 2, "confidence": float64(i%7) / 10,
			"payload": map[string]any{"semantic": map[string]any{"subject": fmt.Sprint("s", i), "predicate": "p"}}}
	}
	var got struct{ IngestBatch []map[string]any }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id salience confidence createdAt sensitivity tags } }`, map[string]any{"in": in}, &got)
	return got.IngestBatch
}

func TestRecordsKeysetPagination(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	recs := seed(t, c, scope, 23)
	orders := []struct {
		field string
		key   func(m map[string]any) float64
	}{
		{"SALIENCE", func(m map[string]any) float64 { return m["salience"].(float64) }},
		{"CONFIDENCE", func(m map[string]any) float64 { return m["confidence"].(float64) }},
	}
	for _, o := range orders {
		for _, dir := range []string{"ASC", "DESC"} {
			t.Run(o.field+"_"+dir, func(t *testing.T) {
				want := append([]map[string]any(nil), recs...)
				sort.Slice(want, func(i, j int) bool {
					a, b := o.key(want[i]), o.key(want[j])
					if a == b {
						a2, b2 := want[i]["id"].(string), want[j]["id"].(string)
						if dir == "ASC" {
							return a2 < b2
						}
						return a2 > b2
					}
					if dir == "ASC" {
						return a < b
					}
					return a > b
				})
				var got []string
				var after any
				pages := 0
				for {
					var page listed
					c.Do(`query($f: RecordFilter, $o: RecordOrder, $after: String) {
					  records(filter: $f, orderBy: $o, first: 5, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }`,
						map[string]any{"f": map[string]any{"scopes": []any{scope}}, "o": map[string]any{"field": o.field, "direction": dir}, "after": after}, &page)
					pages++
					for _, n := range page.Records.Nodes {
						got = append(got, n.ID)
					}
					if !page.Records.PageInfo.HasNextPage {
						break
					}
					after = *page.Records.PageInfo.EndCursor
				}
				if pages != 5 {
					t.Errorf("pages = %d, want 5 for 23 records by 5", pages)
				}
				wantIDs := make([]string, len(want))
				for i, w := range want {
					wantIDs[i] = w["id"].(string)
				}
				if !reflect.DeepEqual(got, wantIDs) {
					t.Fatalf("order:\ngot  %v\nwant %v", got, wantIDs)
				}
			})
		}
	}
	t.Run("cursor of another ordering is rejected", func(t *testing.T) {
		var page listed
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 1) { pageInfo { endCursor } } }`, map[string]any{"s": []any{scope}}, &page)
		c.Fail("BAD_USER_INPUT", `query($a: String) { records(orderBy: {field: SALIENCE}, after: $a) { nodes { id } } }`,
			map[string]any{"a": *page.Records.PageInfo.EndCursor})
	})
	t.Run("newest first by default, stable while records are added", func(t *testing.T) {
		var first listed
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 10) { nodes { id createdAt } pageInfo { endCursor } } }`, map[string]any{"s": []any{scope}}, &first)
		seed(t, c, scope, 3) // newer records must not shift the next page
		var second listed
		c.Do(`query($s: [String!], $a: String) { records(filter: {scopes: $s}, first: 10, after: $a) { nodes { id createdAt } } }`,
			map[string]any{"s": []any{scope}, "a": *first.Records.PageInfo.EndCursor}, &second)
		var all listed
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 100) { nodes { id createdAt } } }`, map[string]any{"s": []any{scope}}, &all)
		if len(all.Records.Nodes) != 26 {
			t.Fatalf("records = %d", len(all.Records.Nodes))
		}
		for i := 1; i < len(all.Records.Nodes); i++ {
			if all.Records.Nodes[i-1].CreatedAt < all.Records.Nodes[i].CreatedAt {
				t.Fatalf("not newest first at %d", i)
			}
		}
		// The second page continues exactly where the first ended.
		idx := map[string]int{}
		for i, n := range all.Records.Nodes {
			idx[n.ID] = i
		}
		lastOfFirst := idx[first.Records.Nodes[9].ID]
		if idx[second.Records.Nodes[0].ID] != lastOfFirst+1 {
			t.Fatalf("second page starts at %d, want %d", idx[second.Records.Nodes[0].ID], lastOfFirst+1)
		}
	})
}

func TestRecordsFilters(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	recs := seed(t, c, scope, 20)
	other := neo4jtest.Scope(t)
	seed(t, c, other, 2)
	count := func(pred func(m map[string]any) bool) int {
		n := 0
		for _, r := range recs {
			if pred(r) {
				n++
			}
		}
		return n
	}
	has := func(m map[string]any, tag string) bool {
		for _, t := range m["tags"].([]any) {
			if t == tag {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name   string
		filter map[string]any
		want   int
	}{
		{"scope", map[string]any{}, 20},
		{"two scopes", map[string]any{"scopes": []any{scope, other}}, 22},
		{"type", map[string]any{"types": []any{"SEMANTIC"}}, 20},
		{"other type", map[string]any{"types": []any{"EPISODIC", "ENTITY"}}, 0},
		{"sensitivity", map[string]any{"sensitivities": []any{"PUBLIC", "MEDIUM"}}, count(func(m map[string]any) bool { return m["sensitivity"] != "LOW" })},
		{"one tag", map[string]any{"tags": []any{"even"}}, count(func(m map[string]any) bool { return has(m, "even") })},
		{"all of two tags", map[string]any{"tags": []any{"even", "five"}}, count(func(m map[string]any) bool { return has(m, "even") && has(m, "five") })},
		{"salience range", map[string]any{"minSalience": 0.5, "maxSalience": 1.0}, count(func(m map[string]any) bool {
			s := m["salience"].(float64)
			return s >= 0.5 && s <= 1
		})},
		{"status", map[string]any{"statuses": []any{"ACTIVE"}}, 20},
		{"retracted", map[string]any{"statuses": []any{"RETRACTED"}}, 0},
		{"created range", map[string]any{"createdAfter": "2000-01-01T00:00:00Z", "createdBefore": "2100-01-01T00:00:00Z"}, 20},
		{"created in the future", map[string]any{"createdAfter": "2100-01-01T00:00:00Z"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := map[string]any{"scopes": []any{scope}}
			for k, v := range tt.filter {
				f[k] = v
			}
			var got listed
			c.Do(`query($f: RecordFilter) { records(filter: $f, first: 100) { nodes { id } totalCount } }`, map[string]any{"f": f}, &got)
			if len(got.Records.Nodes) != tt.want || got.Records.TotalCount == nil || *got.Records.TotalCount != tt.want {
				t.Fatalf("nodes = %d totalCount = %v, want %d", len(got.Records.Nodes), got.Records.TotalCount, tt.want)
			}
		})
	}
	t.Run("totalCount counts beyond the page", func(t *testing.T) {
		var got listed
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 3) { nodes { id } totalCount pageInfo { hasNextPage } } }`, map[string]any{"s": []any{scope}}, &got)
		if len(got.Records.Nodes) != 3 || *got.Records.TotalCount != 20 || !got.Records.PageInfo.HasNextPage {
			t.Fatalf("got %+v", got.Records)
		}
	})
	t.Run("totalCount only runs when selected", func(t *testing.T) {
		before := c.DB.TxCount()
		var got listed
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 3) { nodes { id } } }`, map[string]any{"s": []any{scope}}, &got)
		if n := c.DB.TxCount() - before; n != 1 {
			t.Fatalf("transactions = %d, want 1 (no count query)", n)
		}
	})
}

func TestAuditLogQuery(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	actor := c.Actor
	var ids []string
	for i := 0; i < 3; i++ {
		var got struct{ CreateRecord struct{ ID string } }
		c.Do(`mutation($s: String, $a: String) { createRecord(input: {type: ENTITY, scope: $s, payload: {entity: {canonicalName: "e"}}}, actor: $a) { id } }`,
			map[string]any{"s": scope, "a": actor}, &got)
		ids = append(ids, got.CreateRecord.ID)
	}
	var byActor struct {
		AuditLog struct {
			Nodes    []struct{ RecordID, Action, Actor string }
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	c.Do(`query($a: String) { auditLog(filter: {actor: $a}, first: 2) { nodes { recordId action actor } pageInfo { hasNextPage endCursor } } }`, map[string]any{"a": actor}, &byActor)
	if len(byActor.AuditLog.Nodes) != 2 || !byActor.AuditLog.PageInfo.HasNextPage || byActor.AuditLog.Nodes[0].RecordID != ids[0] {
		t.Fatalf("page 1 = %+v", byActor.AuditLog)
	}
	var next struct {
		AuditLog struct{ Nodes []struct{ RecordID string } }
	}
	c.Do(`query($a: String, $c: String) { auditLog(filter: {actor: $a}, first: 2, after: $c) { nodes { recordId } } }`,
		map[string]any{"a": actor, "c": byActor.AuditLog.PageInfo.EndCursor}, &next)
	if len(next.AuditLog.Nodes) != 1 || next.AuditLog.Nodes[0].RecordID != ids[2] {
		t.Fatalf("page 2 = %+v", next.AuditLog)
	}
	var byRecord struct {
		AuditLog struct {
			Nodes []struct{ RecordID, Action string }
		}
	}
	c.Do(`query($r: ID) { auditLog(filter: {recordId: $r, action: CREATE}) { nodes { recordId action } } }`, map[string]any{"r": ids[1]}, &byRecord)
	if len(byRecord.AuditLog.Nodes) != 1 || byRecord.AuditLog.Nodes[0].RecordID != ids[1] {
		t.Fatalf("by record = %+v", byRecord.AuditLog)
	}
	c.Do(`query($a: String) { auditLog(filter: {actor: $a, since: "2100-01-01T00:00:00Z"}) { nodes { recordId } } }`, map[string]any{"a": actor}, &byRecord)
	if len(byRecord.AuditLog.Nodes) != 0 {
		t.Fatalf("since in the future = %+v", byRecord.AuditLog)
	}
}

func TestNestedAuditLogIsBatched(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	seed(t, c, scope, 30)
	before := c.DB.TxCount()
	var got struct {
		Records struct {
			Nodes []struct {
				AuditLog struct{ Nodes []struct{ Action string } }
			}
		}
	}
	c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 30) { nodes { id auditLog { nodes { action } } } } }`, map[string]any{"s": []any{scope}}, &got)
	if n := c.DB.TxCount() - before; n != 2 {
		t.Fatalf("transactions = %d for 30 records with their audit logs, want 2", n)
	}
	for _, n := range got.Records.Nodes {
		if len(n.AuditLog.Nodes) != 1 || n.AuditLog.Nodes[0].Action != "CREATE" {
			t.Fatalf("audit = %+v", n.AuditLog)
		}
	}
}
