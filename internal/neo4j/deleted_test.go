package neo4j_test

import (
	"cmp"
	"context"
	"os"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestDeletedIDsAreNeverReused: once deleteRecord or prune deleted a
// record, every path that creates a record with a chosen id refuses its id
// with the CONFLICT of an existing record, writes nothing, and the deleted
// record's audit trail stays its own (it gains no entry).
func TestDeletedIDsAreNeverReused(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	p := membrane.DefaultPolicy()
	meta := membrane.RevisionMeta{Actor: "test"}
	at := t0.Add(time.Hour)

	deleteByAdmin := func(t *testing.T, id string) {
		t.Helper()
		if _, err := db.DeleteRecord(ctx, id, func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
			return membrane.PlanDelete(r, edges, meta, at)
		}); err != nil {
			t.Fatal(err)
		}
	}
	prune := func(t *testing.T, scope string, id string) {
		t.Helper()
		res, err := db.Prune(ctx, membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(24 * time.Hour), Scopes: []string{scope}}})
		if err != nil || res.Changed != 1 {
			t.Fatalf("prune: %+v, %v; want 1 record deleted", res, err)
		}
		if _, err := db.FindRecordByID(ctx, id); membrane.ErrorCode(err) != membrane.ENOTFOUND {
			t.Fatalf("pruned record read: %v", err)
		}
	}
	withID := func(in membrane.RecordInput, id string) membrane.RecordInput {
		in.ID = ptr(id)
		return in
	}
	// Each path creates a record with id (a deleted record's) in scope,
	// from the sources it created first.
	paths := []struct {
		name   string
		create func(t *testing.T, scope, id string) ([]*membrane.Record, error)
	}{
		{"createRecord and ingestBatch", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			r, err := p.BuildRecord(withID(fact(scope, "again", 0.5, nil), id), at)
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.CreateRecords(ctx, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)}})
			return nil, err
		}},
		{"supersede", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			old := neo4jtest.Create(t, db, t0, fact(scope, "old", 0.5, nil))[0]
			_, err := db.Revise(ctx, nil, []string{old.ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Supersede(l[old.ID], withID(fact(scope, "new", 0.5, nil), id), meta, at)
			})
			return []*membrane.Record{old}, err
		}},
		{"fork", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			src := neo4jtest.Create(t, db, t0, fact(scope, "source", 0.5, nil))[0]
			_, err := db.Revise(ctx, nil, []string{src.ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Fork(l[src.ID], withID(fact(scope, "fork", 0.5, nil), id), meta, at)
			})
			return []*membrane.Record{src}, err
		}},
		{"merge", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			rs := neo4jtest.Create(t, db, t0, fact(scope, "a", 0.5, nil), fact(scope, "b", 0.5, nil))
			_, err := db.Revise(ctx, nil, []string{rs[0].ID, rs[1].ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Merge([]*membrane.Record{l[rs[0].ID], l[rs[1].ID]}, withID(fact(scope, "merged", 0.5, nil), id), meta, at)
			})
			return rs, err
		}},
	}
	deletions := []struct {
		name string
		// lc makes the record prunable (a second's half-life) when pruned.
		lc     *membrane.LifecycleInput
		delete func(t *testing.T, scope, id string)
	}{
		{"deleteRecord", nil, func(t *testing.T, _, id string) { deleteByAdmin(t, id) }},
		{"prune", &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}, prune},
	}
	for _, d := range deletions {
		for _, path := range paths {
			t.Run(d.name+" then "+path.name, func(t *testing.T) {
				scope := neo4jtest.Scope(t)
				gone := neo4jtest.Create(t, db, t0, fact(scope, "deleted", 0.5, d.lc))[0]
				d.delete(t, scope, gone.ID)
				trail := auditOf(t, db, gone.ID)

				sources, err := path.create(t, scope, gone.ID)
				if membrane.ErrorCode(err) != membrane.ECONFLICT || membrane.ErrorMessage(err) != membrane.IDTaken {
					t.Fatalf("creating the deleted id: %v, want the CONFLICT of an existing record", err)
				}
				if _, err := db.FindRecordByID(ctx, gone.ID); membrane.ErrorCode(err) != membrane.ENOTFOUND {
					t.Fatalf("the deleted id reads as %v", err)
				}
				// Nothing was written: the sources are as they were created.
				after := inScope(t, db, scope)
				if len(after) != len(sources) {
					t.Fatalf("%d records after the refused create, want the %d sources", len(after), len(sources))
				}
				for _, src := range sources {
					if r := after[src.ID]; r == nil || r.Status != membrane.StatusActive || r.Version != src.Version {
						t.Fatalf("source after the refused create = %+v, want it unchanged", r)
					}
				}
				if after := auditOf(t, db, gone.ID); len(after) != len(trail) {
					t.Fatalf("the deleted record's trail went from %d to %d entries", len(trail), len(after))
				}
			})
		}
	}
}

// raw runs a statement on the test database directly, for tests that set
// up states no store method writes or read what is stored, and returns its
// records.
func raw(t *testing.T, stmt string, params map[string]any) []*driver.Record {
	t.Helper()
	auth := driver.NoAuth()
	if u := os.Getenv("NEO4J_USER"); u != "" {
		auth = driver.BasicAuth(u, os.Getenv("NEO4J_PASSWORD"), "")
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), auth)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	res, err := driver.ExecuteQuery(context.Background(), d, stmt, params, driver.EagerResultTransformer,
		driver.ExecuteQueryWithDatabase(cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j")))
	if err != nil {
		t.Fatal(err)
	}
	return res.Records
}
