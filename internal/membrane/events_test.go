package membrane_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// feedEvent is an event as the change feed's shared reader reads it: with
// everything, record included.
func feedEvent(level int, scope string, unscoped bool) *membrane.Event {
	entry := &membrane.AuditEntry{ID: "a1", RecordID: "r1", Action: membrane.AuditReinforce, Actor: "writer",
		ActorDetail: "tool", Rationale: "why", Previous: map[string]any{"confidence": 0.5}, Timestamp: time.Unix(1, 0),
		// References to records at and one above a ceiling of 2 in alpha,
		// two above, and in another scope.
		Related: []membrane.AuditRef{{Role: membrane.RefSupersedes, RecordID: "low", Level: 1, Scope: "alpha"},
			{Role: membrane.RefSupersedes, RecordID: "high", Level: 3, Scope: "alpha"},
			{Role: membrane.RefSupersedes, RecordID: "hyper", Level: 4, Scope: "alpha"},
			{Role: membrane.RefSupersedes, RecordID: "beta", Level: 1, Scope: "beta"}}}
	sens := map[int]membrane.Sensitivity{0: membrane.SensitivityPublic, 1: membrane.SensitivityLow,
		2: membrane.SensitivityMedium, 3: membrane.SensitivityHigh, 4: membrane.SensitivityHyper}[level]
	rec := &membrane.Record{ID: "r1", Type: membrane.TypeSemantic, Sensitivity: sens, Scope: scope, Tags: []string{"t"}}
	return &membrane.Event{Seq: 7, Entry: entry, Record: rec,
		Gate: membrane.EventGate{Level: level, Scope: scope, Unscoped: unscoped, RecordType: membrane.TypeSemantic}}
}

func refIDs(a *membrane.AuditEntry) []string {
	var out []string
	for _, r := range a.Related {
		out = append(out, r.RecordID)
	}
	return out
}

func TestGateEvent(t *testing.T) {
	reader := membrane.Trust{Principal: membrane.Principal{Actor: "r", Role: membrane.RoleReader}, Ceiling: 2, Scopes: []string{"alpha"}}
	all := membrane.Trust{Principal: membrane.Principal{Actor: "a", Role: membrane.RoleReader}, Ceiling: 2, All: true}
	const (
		none = iota
		full
		redacted
	)
	tests := []struct {
		name        string
		trust       membrane.Trust
		level       int
		scope       string
		unscoped    bool
		withRecords bool
		want        int
	}{
		{"at the ceiling, in scope", reader, 2, "alpha", false, true, full},
		{"at the ceiling, audit only", reader, 2, "alpha", false, false, full},
		{"one above: redacted with records", reader, 3, "alpha", false, true, redacted},
		{"one above: nothing in the audit feed", reader, 3, "alpha", false, false, none},
		{"two above", reader, 4, "alpha", false, true, none},
		{"another scope", reader, 1, "beta", false, true, none},
		{"empty scope: everyone's", reader, 1, "", false, true, full},
		{"no scope stored: not for a scoped trust", reader, 1, "", true, true, none},
		{"no scope stored: a trust of every scope", all, 1, "", true, true, full},
		{"negative level", all, -1, "", false, true, none},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := feedEvent(tc.level, tc.scope, tc.unscoped)
			g := tc.trust.GateEvent(e, tc.withRecords)
			switch {
			case tc.want == none:
				if g != nil {
					t.Fatalf("got %+v, want nothing", g)
				}
				return
			case g == nil:
				t.Fatal("got nothing")
			case g.Seq != e.Seq || g.Entry.ID != e.Entry.ID || g.Entry.RecordID != "r1" || g.Entry.Action != e.Entry.Action:
				t.Fatalf("got %+v, want the entry %+v", g, e)
			case g.Redacted != (tc.want == redacted):
				t.Fatalf("redacted = %v, want %v", g.Redacted, tc.want == redacted)
			case tc.want == redacted && (g.Entry.Rationale != "" || g.Entry.Actor != "" || g.Entry.ActorDetail != "" || g.Entry.Previous != nil):
				t.Fatalf("a redacted entry shows its free text: %+v", g.Entry)
			case tc.want == full && (g.Entry.Rationale != "why" || g.Entry.Actor != "writer"):
				t.Fatalf("a visible entry lost its text: %+v", g.Entry)
			case tc.want == full && !reflect.DeepEqual(refIDs(g.Entry), map[bool][]string{false: {"low", "high"}, true: {"low", "high", "beta"}}[tc.trust.All]):
				// A live event gates its references like a page of the
				// trail: none to a record two above or out of scope.
				t.Fatalf("references %v", refIDs(g.Entry))
			case tc.want == redacted && len(g.Entry.Related) != 0:
				t.Fatalf("a redacted entry shows references %v", refIDs(g.Entry))
			case !tc.withRecords && g.Record != nil:
				t.Fatalf("record %+v without withRecords", g.Record)
			case tc.withRecords && g.Record == nil:
				t.Fatal("no record")
			case tc.withRecords && g.Record.Redacted != (tc.level > tc.trust.Ceiling):
				t.Fatalf("record redacted = %v at level %d", g.Record.Redacted, tc.level)
			}
			// The shared event is untouched: other subscribers see it too.
			if e.Entry.Rationale != "why" || e.Record.Redacted || e.Redacted || len(e.Entry.Related) != 4 {
				t.Fatalf("the shared event changed: %+v %+v", e.Entry, e.Record)
			}
		})
	}
}

func TestChangeFilterMatches(t *testing.T) {
	e := feedEvent(1, "alpha", false)
	unscoped := feedEvent(1, "", true)
	tests := []struct {
		name string
		f    membrane.ChangeFilter
		e    *membrane.Event
		want bool
	}{
		{"empty filter", membrane.ChangeFilter{}, e, true},
		{"id", membrane.ChangeFilter{RecordIDs: []string{"x", "r1"}}, e, true},
		{"other id", membrane.ChangeFilter{RecordIDs: []string{"x"}}, e, false},
		{"type", membrane.ChangeFilter{Types: []membrane.MemoryType{membrane.TypeSemantic}}, e, true},
		{"other type", membrane.ChangeFilter{Types: []membrane.MemoryType{membrane.TypeEpisodic}}, e, false},
		{"scope", membrane.ChangeFilter{Scopes: []string{"alpha"}}, e, true},
		{"other scope", membrane.ChangeFilter{Scopes: []string{"beta"}}, e, false},
		{"no scope stored matches no scope filter", membrane.ChangeFilter{Scopes: []string{""}}, unscoped, false},
		{"action", membrane.ChangeFilter{Actions: []membrane.AuditAction{membrane.AuditReinforce}}, e, true},
		{"other action", membrane.ChangeFilter{Actions: []membrane.AuditAction{membrane.AuditCreate}}, e, false},
		{"actor", membrane.ChangeFilter{Actors: []string{"writer"}}, e, true},
		{"other actor", membrane.ChangeFilter{Actors: []string{"someone"}}, e, false},
		{"all lists must match", membrane.ChangeFilter{Scopes: []string{"alpha"}, Actors: []string{"someone"}}, e, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Matches(tc.e); got != tc.want {
				t.Fatalf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCoverFilters(t *testing.T) {
	semantic, episodic := membrane.TypeSemantic, membrane.TypeEpisodic
	tests := []struct {
		name    string
		filters []membrane.ChangeFilter
		limit   int
		want    membrane.ChangeFilter
	}{
		{"none", nil, 10, membrane.ChangeFilter{}},
		{"one", []membrane.ChangeFilter{{Scopes: []string{"a"}, Types: []membrane.MemoryType{semantic}}}, 10,
			membrane.ChangeFilter{Scopes: []string{"a"}, Types: []membrane.MemoryType{semantic}}},
		{"union, each value once", []membrane.ChangeFilter{{Scopes: []string{"a", "b"}}, {Scopes: []string{"b", "c"}}}, 10,
			membrane.ChangeFilter{Scopes: []string{"a", "b", "c"}}},
		{"one list empty: any", []membrane.ChangeFilter{{Scopes: []string{"a"}, Types: []membrane.MemoryType{semantic}},
			{Types: []membrane.MemoryType{episodic}}}, 10,
			membrane.ChangeFilter{Types: []membrane.MemoryType{semantic, episodic}}},
		{"past the limit: any", []membrane.ChangeFilter{{RecordIDs: []string{"1", "2"}}, {RecordIDs: []string{"3"}}}, 2,
			membrane.ChangeFilter{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := membrane.CoverFilters(tc.filters, tc.limit)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			// Whatever one of the filters selects, the cover selects.
			for _, f := range tc.filters {
				for _, e := range coverProbes() {
					if f.Matches(e) && !got.Matches(e) {
						t.Fatalf("%+v selects %+v but the cover %+v does not", f, e.Entry, got)
					}
				}
			}
		})
	}
}

// coverProbes are events of every combination of the values the filters
// above name.
func coverProbes() []*membrane.Event {
	var out []*membrane.Event
	for _, id := range []string{"1", "2", "3", "9"} {
		for _, scope := range []string{"a", "b", "c", "z"} {
			for _, typ := range []membrane.MemoryType{membrane.TypeSemantic, membrane.TypeEpisodic, membrane.TypeWorking} {
				out = append(out, &membrane.Event{Entry: &membrane.AuditEntry{RecordID: id, Action: membrane.AuditCreate, Actor: "x"},
					Gate: membrane.EventGate{Scope: scope, RecordType: typ}})
			}
		}
	}
	return out
}
