package neo4j_test

import (
	"encoding/json"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSemanticObjectProperty: a semantic object's node property keeps a
// number's and a boolean's type (an object of 30 was stored "30", so an
// analyst's WHERE m.object > 20 found nothing), other values as text; the
// payload is unchanged.
func TestSemanticObjectProperty(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	withObject := func(subject string, o any) membrane.RecordInput {
		in := fact(scope, subject, 1, nil)
		in.Payload.Semantic.Object = o
		return in
	}
	tests := []struct {
		name   string
		object any
		want   any
	}{
		{"integral float (JSON)", 30.0, int64(30)},
		{"fraction", 2.5, 2.5},
		{"json number", json.Number("42"), int64(42)},
		{"boolean", true, true},
		{"string", "30", "30"},
		{"list", []any{"a", 1.0}, `["a",1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := neo4jtest.Create(t, db, t0, withObject(tt.name, tt.object))[0]
			rows := raw(t, `MATCH (m:Memory {id: $id}) RETURN m.object, toString(m.object)`, map[string]any{"id": r.ID})
			if len(rows) != 1 || rows[0].Values[0] != tt.want {
				t.Fatalf("m.object = %#v, want %#v", rows[0].Values[0], tt.want)
			}
		})
	}
	rows := raw(t, `MATCH (m:Memory {scope: $scope}) WHERE m.object > 20 RETURN m.subject ORDER BY m.subject`, map[string]any{"scope": scope})
	var got []string
	for _, r := range rows {
		got = append(got, r.Values[0].(string))
	}
	if len(got) != 2 || got[0] != "integral float (JSON)" || got[1] != "json number" {
		t.Fatalf("WHERE m.object > 20 found %v", got)
	}
}
