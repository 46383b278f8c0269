package neo4j_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestCheckInvariants shows that the checks the crash and load tests rely
// on are not vacuous: a scope written by real revisions passes, and each
// kind of damage, written through Revise with a change no revision plans
// (the store applies whatever change it is given), is reported by the check
// meant for it.
func TestCheckInvariants(t *testing.T) {
	db := neo4jtest.DB(t)
	p := membrane.DefaultPolicy()
	meta := membrane.RevisionMeta{Actor: "test"}
	at := t0.Add(time.Minute)

	// build returns a record of scope that is not stored yet.
	build := func(t *testing.T, scope, subject string) *membrane.Record {
		r, err := p.BuildRecord(fact(scope, subject, 1, nil), at)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	edge := func(pred membrane.Predicate, from, to string) membrane.Relation {
		return membrane.Relation{Predicate: pred, SourceID: from, TargetID: to, Weight: 1, CreatedAt: at, Actor: "test"}
	}

	cases := []struct {
		name string
		// damage writes into scope; nil writes nothing beyond proper revisions.
		damage func(t *testing.T, scope string)
		// want is the check expected to report, "" for none.
		want string
	}{
		{"proper revisions", nil, ""},
		{"record without its create audit entry", func(t *testing.T, scope string) {
			r := build(t, scope, "no audit")
			revise(t, db, nil, func(map[string]*membrane.Record) (*membrane.Change, error) {
				return &membrane.Change{Creates: []*membrane.Record{r}, Result: r}, nil
			})
		}, "invariants_records"},
		{"supersede edge without audit entries", func(t *testing.T, scope string) {
			a, b := neo4jtest.Create(t, db, t0, fact(scope, "a", 1, nil))[0], build(t, scope, "b")
			revise(t, db, []string{a.ID}, func(map[string]*membrane.Record) (*membrane.Change, error) {
				// a is superseded as a supersede does, but gets no audit entry.
				retired := *a
				retired.Status, retired.Version = membrane.StatusSuperseded, a.Version+1
				return &membrane.Change{Creates: []*membrane.Record{b}, Updates: []*membrane.Record{&retired}, Result: b,
					Audits: []*membrane.AuditEntry{membrane.NewAuditEntry(b.ID, membrane.AuditCreate, "test", "", at)},
					Edges:  []membrane.Relation{edge(membrane.PredSupersedes, b.ID, a.ID)}}, nil
			})
		}, "invariants_edges"},
		{"proper session chain", func(t *testing.T, scope string) {
			neo4jtest.Create(t, db, t0, episode(scope, "s", 2), episode(scope, "s", 0), episode(scope, "s", 1))
		}, ""},
		{"NEXT edge against time order", func(t *testing.T, scope string) {
			eps := neo4jtest.Create(t, db, t0, episode(scope, "s", 0), episode(scope, "s", 1))
			revise(t, db, nil, func(map[string]*membrane.Record) (*membrane.Change, error) {
				return &membrane.Change{Edges: []membrane.Relation{edge(membrane.PredNext, eps[1].ID, eps[0].ID)}, Result: eps[0]}, nil
			})
		}, "invariants_chains"},
		{"record superseded twice", func(t *testing.T, scope string) {
			old := neo4jtest.Create(t, db, t0, fact(scope, "old", 1, nil))[0]
			for _, s := range []string{"new 1", "new 2"} {
				revise(t, db, []string{old.ID}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
					// Plans against a stale copy: the second supersede does
					// not see that the first retracted the record.
					return p.Supersede(old, fact(scope, s, 1, nil), meta, at)
				})
			}
		}, "invariants_chains"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			t.Cleanup(func() { deleteScope(t, db, scope) })
			// Every scope also holds proper revisions, which must not be reported.
			recs := neo4jtest.Create(t, db, t0, fact(scope, "x", 1, nil), fact(scope, "y", 1, nil), fact(scope, "z", 1, nil))
			revise(t, db, []string{recs[0].ID}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Supersede(l[recs[0].ID], fact(scope, "x2", 1, nil), meta, at)
			})
			if _, err := db.Revise(sysCtx(), nil, []string{recs[1].ID}, []string{recs[2].ID},
				func(l, r map[string]*membrane.Record) (*membrane.Change, error) {
					return membrane.Contest(l[recs[1].ID], recs[2].ID, r[recs[2].ID], meta, at)
				}); err != nil {
				t.Fatal(err)
			}
			revise(t, db, []string{recs[2].ID}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Fork(l[recs[2].ID], fact(scope, "z fork", 1, nil), meta, at)
			})
			if c.damage != nil {
				c.damage(t, scope)
			}
			got, err := db.CheckInvariants(context.Background(), scope)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("violations in a proper scope: %v", got)
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("no violation reported, want one from %s", c.want)
			}
			for _, v := range got {
				if !strings.HasPrefix(v, c.want+":") {
					t.Errorf("violation %q, want only %s", v, c.want)
				}
			}
			t.Logf("reported: %v", got)
		})
	}
}

// episode is an episode of session in scope whose event is min minutes after t0.
func episode(scope, session string, min int) membrane.RecordInput {
	return membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: ptr(scope), Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
		SessionID: session, Timeline: []membrane.TimelineEvent{{T: t0.Add(time.Duration(min) * time.Minute), EventKind: "k", Ref: "r"}}}}}
}

func deleteScope(t *testing.T, db *neo4j.DB, scope string) {
	if err := db.DeleteScope(context.Background(), scope); err != nil {
		t.Errorf("delete scope %s: %v", scope, err)
	}
}
