package neo4j_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestAuditRefsMigration: audit entries and a supersede successor written
// by an earlier version (ids of other records in rationales, removedEdges
// and provenance; one rationale sealed) are migrated into references that
// are gated per caller, with the caller's words kept.
func TestAuditRefsMigration(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	sensitive := func(in membrane.RecordInput, s membrane.Sensitivity) membrane.RecordInput {
		in.Sensitivity = &s
		return in
	}
	recs := create(t, db, t0,
		sensitive(fact(scope, "visible", 0.5, nil), membrane.SensitivityLow),
		sensitive(fact(scope, "hidden", 0.5, nil), membrane.SensitivityHyper),
		sensitive(fact(scope, "merged", 0.5, nil), membrane.SensitivityHyper))
	a, h, m := recs[0], recs[1], recs[2]
	succIn := sensitive(fact(scope, "successor", 0.5, nil), membrane.SensitivityLow)
	succIn.Provenance = &membrane.ProvenanceInput{Sources: []membrane.ProvenanceSource{
		{Kind: membrane.ProvenanceEvent, Ref: "seed"}, {Kind: membrane.ProvenanceEvent, Ref: h.ID, CreatedBy: "agent"}}}
	succ := create(t, db, t0, succIn)[0]

	sealer, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{neo4jtest.TestSealKey}, neo4jtest.TestSealKey.ID)
	if err != nil {
		t.Fatal(err)
	}
	sealedID := membrane.NewID()
	sealed, err := sealer.Seal([]byte("merged from "+a.ID+", "+h.ID+": same fact"), sealedID+"/rationale")
	if err != nil {
		t.Fatal(err)
	}
	gone := "gone-" + membrane.NewID()
	entry := func(id, recordID, action, rationale string, level int64) map[string]any {
		return map[string]any{"id": id, "recordId": recordID, "action": action, "actor": "old", "at": t0,
			"rationale": rationale, "scope": scope, "sensitivityLevel": level, "recordType": "semantic"}
	}
	ids := map[string]string{"supersede": membrane.NewID(), "contest": membrane.NewID(), "relate": membrane.NewID(),
		"target": membrane.NewID(), "delete": membrane.NewID(), "plain": membrane.NewID(),
		"cut id": membrane.NewID(), "spaced id": membrane.NewID()}
	rows := []map[string]any{
		entry(ids["supersede"], a.ID, "supersede", "superseded by "+h.ID+": newer info", 1),
		entry(ids["contest"], a.ID, "contest", "contests "+h.ID+": words meant for the hyper record", 1),
		entry(ids["relate"], a.ID, "relate", "supports "+h.ID+": because", 1),
		entry(ids["target"], a.ID, "relate", a.ID+" is the target of supports from "+h.ID+": because", 1),
		entry(ids["plain"], a.ID, "reinforce", "reinforced: good", 1),
		// Client-chosen ids the parse cannot read whole ("my: "+h.ID,
		// "my "+h.ID): no piece of them may stay in the words.
		entry(ids["cut id"], a.ID, "supersede", "superseded by my: "+h.ID+": words", 1),
		entry(ids["spaced id"], a.ID, "relate", "supports my "+h.ID+": because", 1),
		entry(sealedID, m.ID, "create", sealed, 4),
	}
	tomb := entry(ids["delete"], gone, "delete", "deleted by an admin: gdpr", 1)
	tomb["removedEdges"] = []string{"MENTIONS<-" + h.ID, "SUPPORTS->" + a.ID}
	rows = append(rows, tomb)
	raw(t, `UNWIND $rows AS r CREATE (e:AuditEntry) SET e = r`, map[string]any{"rows": rows})
	raw(t, `MATCH (s:Memory {id: $s}), (h:Memory {id: $h}) CREATE (s)-[:SUPERSEDES {weight: 1.0, createdAt: $at, actor: 'old'}]->(h)`,
		map[string]any{"s": succ.ID, "h": h.ID, "at": t0})

	migrated, skipped, err := db.MigrateAuditRefsIn(context.Background(), []string{scope})
	// Every entry but the one naming no record, and the successor.
	if err != nil || skipped != 0 || migrated != len(rows)-1+1 {
		t.Fatalf("migrated %d, skipped %d, err %v; want %d, 0", migrated, skipped, err, len(rows))
	}

	low := membrane.NewContextWithTrust(context.Background(), membrane.Trust{
		Principal: membrane.Principal{Actor: "low", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}},
		Ceiling:   1, Scopes: []string{scope}})
	byID := func(ctx context.Context, recordID string) map[string]*membrane.AuditEntry {
		page, err := db.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &recordID}, membrane.Page{First: 50})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*membrane.AuditEntry{}
		for _, e := range page.Items {
			out[e.ID] = e
		}
		return out
	}
	type ref struct{ role, id string }
	refs := func(e *membrane.AuditEntry) []ref {
		var out []ref
		for _, r := range e.Related {
			out = append(out, ref{string(r.Role), r.RecordID})
		}
		return out
	}
	sys, lowView := byID(sysCtx(), a.ID), byID(low, a.ID)
	for _, tc := range []struct {
		name, id, words string
		refs            []ref
	}{
		{"supersede", ids["supersede"], "newer info", []ref{{"superseded_by", h.ID}}},
		{"contest: no other caller's words", ids["contest"], "", []ref{{"contests", h.ID}}},
		{"relation source", ids["relate"], "because", []ref{{"related_to", h.ID}}},
		{"relation target", ids["target"], "", []ref{{"related_from", h.ID}}},
		{"no id: unchanged", ids["plain"], "reinforced: good", nil},
		{"id cut at ': ': words dropped", ids["cut id"], "", nil},
		{"id with a space: words dropped", ids["spaced id"], "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, gated := sys[tc.id], lowView[tc.id]
			if full == nil || gated == nil {
				t.Fatalf("entry missing: %v %v", full, gated)
			}
			if full.Rationale != tc.words || !slices.Equal(refs(full), tc.refs) {
				t.Fatalf("cleared: %q %v, want %q %v", full.Rationale, refs(full), tc.words, tc.refs)
			}
			if b, _ := json.Marshal(gated); strings.Contains(string(b), h.ID) || gated.Rationale != tc.words || len(gated.Related) != 0 {
				t.Fatalf("low reader sees %s", b)
			}
		})
	}
	t.Run("tombstone", func(t *testing.T) {
		full, gated := byID(sysCtx(), gone)[ids["delete"]], byID(low, gone)[ids["delete"]]
		if full == nil || gated == nil {
			t.Fatal("tombstone missing")
		}
		if got := full.RemovedEdges(); !slices.Equal(got, []string{"MENTIONS<-" + h.ID, "SUPPORTS->" + a.ID}) {
			t.Fatalf("cleared removed edges %v", got)
		}
		if got := gated.RemovedEdges(); !slices.Equal(got, []string{"SUPPORTS->" + a.ID}) {
			t.Fatalf("low reader's removed edges %v, want only the visible one", got)
		}
	})
	t.Run("sealed rationale", func(t *testing.T) {
		e := byID(sysCtx(), m.ID)[sealedID]
		if e == nil || e.Rationale != "same fact" || !slices.Equal(refs(e), []ref{{"merged_from", a.ID}, {"merged_from", h.ID}}) {
			t.Fatalf("sealed entry %+v", e)
		}
	})
	t.Run("at rest", func(t *testing.T) {
		// Straight from the database: the sealed rationale is still
		// sealed, and no text property names another record.
		res := raw(t, `MATCH (e:AuditEntry) WHERE e.id IN $ids RETURN e.id, e.rationale, e.removedEdges`,
			map[string]any{"ids": []string{sealedID, ids["supersede"], ids["delete"]}})
		for _, r := range res {
			rat, _ := r.Values[1].(string)
			if r.Values[0] == sealedID && !membrane.IsSealed(rat) || strings.Contains(rat, h.ID) || r.Values[2] != nil {
				t.Fatalf("stored %v", r.Values)
			}
		}
		got, err := db.FindRecordByID(sysCtx(), succ.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Provenance.Sources) != 1 || got.Provenance.Sources[0].Ref != "seed" {
			t.Fatalf("successor's provenance %+v, want only its own source", got.Provenance.Sources)
		}
	})
}

// TestAuditRefsFollowTheRecordNow: a reference written while its record
// was visible is gated on the record as it is now, as relation fields are:
// once the record sits above the reader's reach, the reader no longer sees
// its id in the trail.
func TestAuditRefsFollowTheRecordNow(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	low := membrane.SensitivityLow
	src, tgt := fact(scope, "source", 0.5, nil), fact(scope, "target", 0.5, nil)
	src.Sensitivity, tgt.Sensitivity = &low, &low
	recs := create(t, db, t0, src, tgt)
	a, b := recs[0].ID, recs[1].ID
	if _, err := db.Revise(sysCtx(), nil, []string{a, b}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Relate(locked[a], locked[b], membrane.PredSupports, nil, membrane.RevisionMeta{Actor: "test"}, t0)
	}); err != nil {
		t.Fatal(err)
	}
	reader := membrane.NewContextWithTrust(context.Background(), membrane.Trust{
		Principal: membrane.Principal{Actor: "low", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}},
		Ceiling:   1, Scopes: []string{scope}})
	shows := func() bool {
		page, err := db.FindAuditEntries(reader, membrane.AuditFilter{RecordID: &a}, membrane.Page{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(page.Items)
		return strings.Contains(string(b2), b)
	}
	if !shows() {
		t.Fatal("the reader does not see the reference to a record it sees")
	}
	// Raised out of the reader's reach (as consolidation may raise a record).
	raw(t, `MATCH (m:Memory {id: $id}) SET m.sensitivityLevel = 4, m.sensitivity = 'hyper'`, map[string]any{"id": b})
	// Put back afterwards: a hyper record stored in clear is a state other
	// tests' invariant checks would report.
	t.Cleanup(func() {
		raw(t, `MATCH (m:Memory {id: $id}) SET m.sensitivityLevel = 1, m.sensitivity = 'low'`, map[string]any{"id": b})
	})
	if shows() {
		t.Fatal("the reader still sees the id of a record now above its reach")
	}
}

// TestAuditRefsMigrationLeavesNewEntries: the migration runs again at a
// start with a new key; entries written since audit references (with or
// without references) are not read as legacy text, even when the caller's
// own words look like it.
func TestAuditRefsMigrationLeavesNewEntries(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	recs := create(t, db, t0, fact(scope, "contested", 0.5, nil), fact(scope, "plain", 0.5, nil))
	named := membrane.NewID()
	for _, tc := range []struct {
		name, rationale, want string
		change                func(r map[string]*membrane.Record, meta membrane.RevisionMeta) (*membrane.Change, error)
		id                    string
	}{
		{"contest by an external reference", "contests " + named + ": my words", "contests " + named + ": my words",
			func(r map[string]*membrane.Record, meta membrane.RevisionMeta) (*membrane.Change, error) {
				return membrane.Contest(r[recs[0].ID], "https://tickets.example/1", nil, meta, t0)
			}, recs[0].ID},
		{"reinforce", "supported by episode " + named, "reinforced: supported by episode " + named,
			func(r map[string]*membrane.Record, meta membrane.RevisionMeta) (*membrane.Change, error) {
				return membrane.Reinforce(r[recs[1].ID], meta, t0)
			}, recs[1].ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := membrane.RevisionMeta{Actor: "test", Rationale: tc.rationale}
			if _, err := db.Revise(sysCtx(), nil, []string{tc.id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return tc.change(locked, meta)
			}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := db.MigrateAuditRefsIn(context.Background(), []string{scope}); err != nil {
				t.Fatal(err)
			}
			page, err := db.FindAuditEntries(sysCtx(), membrane.AuditFilter{RecordID: &tc.id}, membrane.Page{First: 10})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range page.Items {
				if e.Action == membrane.AuditCreate {
					continue
				}
				found = true
				if e.Rationale != tc.want || len(e.Related) != 0 {
					t.Fatalf("entry after the migration: rationale %q, references %+v; want the caller's words unchanged", e.Rationale, e.Related)
				}
			}
			if !found {
				t.Fatal("the revision's entry is missing")
			}
		})
	}
}
