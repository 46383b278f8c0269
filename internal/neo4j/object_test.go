package neo4j_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
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
			r := create(t, db, t0, withObject(tt.name, tt.object))[0]
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

// TestSemanticObjectTypesMigration: records written before the object
// property kept its type (their node holds the text "30" while their
// payload holds the number 30) get the typed property at start-up, so
// WHERE m.object > 20 finds them as it finds new writes; an object that
// is text in the payload stays text, a sealed record gets no object (its
// payload stays sealed), and migrating again changes nothing.
func TestSemanticObjectTypesMigration(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	high := membrane.SensitivityHigh
	withObject := func(subject string, o any, sens *membrane.Sensitivity) membrane.RecordInput {
		in := fact(scope, subject, 1, nil)
		in.Payload.Semantic.Object = o
		in.Sensitivity = sens
		return in
	}
	recs := create(t, db, t0,
		withObject("number", 30.0, nil),
		withObject("fraction", 2.5, nil),
		withObject("boolean", true, nil),
		withObject("text", "30", nil),
		withObject("word", "thirty", nil),
		withObject("sealed", 31.0, &high),
	)
	want := map[string]any{"number": int64(30), "fraction": 2.5, "boolean": true, "text": "30", "word": "thirty", "sealed": nil}
	type state struct{ object, payload any }
	states := func() map[string]state {
		t.Helper()
		out := map[string]state{}
		for _, r := range raw(t, `MATCH (m:Memory {scope: $scope}) RETURN m.subject, m.id, m.object, m.payload`, map[string]any{"scope": scope}) {
			name, _ := r.Values[0].(string)
			if name == "" { // sealed: no subject either
				name = "sealed"
				if r.Values[1] != recs[5].ID {
					t.Fatalf("record %v has no subject", r.Values[1])
				}
			}
			out[name] = state{r.Values[2], r.Values[3]}
		}
		return out
	}
	before := states()
	if !membrane.IsSealed(before["sealed"].payload.(string)) {
		t.Fatal("the high record is not sealed")
	}
	// The scope as an earlier version left it: every object text. The
	// migration's pass runs over this scope only: deleting the shared
	// Migration node instead would race other packages' stores starting
	// meanwhile.
	raw(t, `MATCH (m:Memory {scope: $scope}) WHERE m.object IS NOT NULL SET m.object = toString(m.object)`,
		map[string]any{"scope": scope})
	if got := states()["number"].object; got != "30" {
		t.Fatalf("old-style object = %#v, want \"30\"", got)
	}
	for run := range 2 {
		if err := db.ObjectTypesIn(context.Background(), []string{scope}); err != nil {
			t.Fatal(err)
		}
		after := states()
		for name, w := range want {
			if after[name].object != w {
				t.Errorf("run %d: %s: m.object = %#v, want %#v", run, name, after[name].object, w)
			}
			if after[name].payload != before[name].payload {
				t.Errorf("run %d: %s: payload changed", run, name)
			}
		}
	}
	// Start-up runs the pass (the store of this test has started).
	if rows := raw(t, `MATCH (g:Migration {name: $name}) RETURN g`, map[string]any{"name": neo4j.ObjectTypesMigration}); len(rows) != 1 {
		t.Fatalf("migration %s recorded %d times, want 1", neo4j.ObjectTypesMigration, len(rows))
	}
	rows := raw(t, `MATCH (m:Memory {scope: $scope}) WHERE m.object > 20 RETURN m.subject`, map[string]any{"scope": scope})
	if len(rows) != 1 || rows[0].Values[0] != "number" {
		t.Fatalf("WHERE m.object > 20 found %d records", len(rows))
	}
}
