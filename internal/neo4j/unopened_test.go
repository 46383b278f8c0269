package neo4j_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestRevisionOfUnopenedRecord: a revision or deletion naming a record
// sealed under a key this server lacks answers a request that may not see
// the record exactly as it answers an unknown id (an earlier version
// decoded the record before the plan checked visibility, and answered
// FAILED_PRECONDITION "sealed under an encryption key this server does not
// hold": an existence oracle for a LOW writer naming a HYPER record). A
// request seeing it redacted is refused as for any redacted record, and
// only one that would see it in full learns that it does not open.
func TestRevisionOfUnopenedRecord(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("ulost-"+suffix, 51)
	kept := neo4jtest.SealKey("ukept-"+suffix, 52)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
	withLost := neo4jtest.OpenSealing(t, []membrane.SealKey{lost}, lost.ID)
	neo4jtest.DeleteAtEnd(t, withLost, scope)
	hidden := sealedFact(t, withLost, scope, membrane.SensitivityHyper, "vault", "opens_with", "the lost key")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	unknown := membrane.NewID()

	// The revision service's guard (membrane.Trust.GuardPlan): locked records in full
	// view, optional ones counted missing when invisible.
	retract := func(trust membrane.Trust, id string) membrane.PlanFunc {
		return func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			if err := trust.CanRevise(locked[id]); err != nil {
				return nil, err
			}
			return membrane.Retract(locked[id], membrane.RevisionMeta{Actor: trust.Principal.Actor}, time.Now())
		}
	}
	revise := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, []string{id}, nil, retract(trust, id))
		return err
	}
	del := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.DeleteRecord(ctx, id, func(r *membrane.Record, _ []membrane.AuditRef) (*membrane.AuditEntry, error) {
			if err := trust.CanRevise(r); err != nil {
				return nil, err
			}
			return &membrane.AuditEntry{ID: membrane.NewID(), RecordID: r.ID, Action: membrane.AuditDelete, Timestamp: time.Now()}, nil
		})
		return err
	}
	// read: the record named as an optional one (relate's target): an
	// invisible one is absent, as an unknown id.
	read := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, nil, []string{id}, func(_, read map[string]*membrane.Record) (*membrane.Change, error) {
			if r := read[id]; r != nil {
				if trust.Visibility(r) == membrane.Invisible {
					return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
				}
				return nil, membrane.Errorf(membrane.EFORBIDDEN, "present")
			}
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		})
		return err
	}
	paths := map[string]func(membrane.Trust, string) error{"revise": revise, "deleteRecord": del, "optional read": read}

	for name, trust := range map[string]membrane.Trust{
		"low writer, same scope":    writerAt(membrane.SensitivityLow, scope),
		"hyper writer, other scope": writerAt(membrane.SensitivityHyper, other),
	} {
		for path, run := range paths {
			t.Run(name+"/"+path, func(t *testing.T) {
				got, want := run(trust, hidden), run(trust, unknown)
				if got == nil || want == nil {
					t.Fatalf("hidden: %v, unknown: %v; want both refused", got, want)
				}
				if g, w := strings.ReplaceAll(got.Error(), hidden, "ID"), strings.ReplaceAll(want.Error(), unknown, "ID"); g != w ||
					membrane.ErrorCode(got) != membrane.ErrorCode(want) {
					t.Fatalf("the hidden record answers %q (%s), an unknown id %q (%s)", g, membrane.ErrorCode(got), w, membrane.ErrorCode(want))
				}
			})
		}
	}
	for _, c := range []struct {
		name  string
		trust membrane.Trust
		want  string
	}{
		{"high writer sees it redacted", writerAt(membrane.SensitivityHigh, scope), membrane.EFORBIDDEN},
		{"hyper writer would see it in full", writerAt(membrane.SensitivityHyper, scope), membrane.EPRECONDITION},
	} {
		for _, path := range []string{"revise", "deleteRecord"} {
			t.Run(c.name+"/"+path, func(t *testing.T) {
				if err := paths[path](c.trust, hidden); membrane.ErrorCode(err) != c.want {
					t.Fatalf("%v, want %s", err, c.want)
				}
			})
		}
	}
	// A plan that does not check visibility (the server's own work) still
	// cannot revise a record that does not open.
	t.Run("unchecked plan", func(t *testing.T) {
		trust := writerAt(membrane.SensitivityHigh, scope)
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, []string{hidden}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			return &membrane.Change{}, nil
		})
		if membrane.ErrorCode(err) != membrane.EPRECONDITION {
			t.Fatalf("%v, want %s", err, membrane.EPRECONDITION)
		}
	})
}

// TestFindByKeySkipsUnopened: consolidation finds the oldest fact (and
// competence) of a key that opens. An earlier version read only the oldest
// of each key and dropped it when it did not open, so a newer readable one
// of the same key was never found, and every supporting episode created
// another duplicate.
func TestFindByKeySkipsUnopened(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("flost-"+suffix, 53)
	kept := neo4jtest.SealKey("fkept-"+suffix, 54)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	high := membrane.SensitivityHigh
	// A payload sealed under the lost key, given to the oldest record of
	// each key below: its digest is the server's, its payload does not open.
	sealedElsewhere := nodeProps(t, sealedFact(t, withLost, scope, high, "unrelated", "is", "sealed elsewhere"))["payload"]
	unopen := func(id string) {
		t.Helper()
		drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
		if err != nil {
			t.Fatal(err)
		}
		defer drv.Close(context.Background())
		if _, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (m:Memory {id: $id}) SET m.payload = $payload`,
			map[string]any{"id": id, "payload": sealedElsewhere}, driver.EagerResultTransformer); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("facts", func(t *testing.T) {
		key := membrane.FactKey{Scope: scope, Subject: "deploy", Predicate: membrane.PredicateObservedIn, Object: "canary green"}
		oldest := sealedFact(t, server, scope, high, key.Subject, key.Predicate, key.Object)
		readable := sealedFact(t, server, scope, high, key.Subject, key.Predicate, key.Object)
		unopen(oldest)
		found, err := server.FindFacts(sys, []membrane.FactKey{key})
		if err != nil {
			t.Fatal(err)
		}
		if f := found[key]; f == nil || f.ID != readable {
			t.Fatalf("FindFacts: %+v, want %s (the oldest, %s, does not open)", f, readable, oldest)
		}
	})
	t.Run("competences", func(t *testing.T) {
		key := membrane.CompetenceKey{SkillName: "release-" + suffix, Scope: scope}
		competence := func() string {
			r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeCompetence, Scope: &scope, Sensitivity: &high,
				Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: key.SkillName}}}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := server.CreateRecords(sys, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", time.Now())}}); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		oldest, readable := competence(), competence()
		unopen(oldest)
		found, err := server.FindCompetences(sys, []membrane.CompetenceKey{key})
		if err != nil {
			t.Fatal(err)
		}
		if c := found[key]; c == nil || c.ID != readable {
			t.Fatalf("FindCompetences: %+v, want %s (the oldest, %s, does not open)", c, readable, oldest)
		}
	})
}
