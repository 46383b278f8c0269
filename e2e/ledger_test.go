package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// ledger remembers what clients were told: every record a mutation
// acknowledged, with the status its last acknowledged change left it in.
// After a crash or a load run, verify checks the database against it.
type ledger struct {
	mu sync.Mutex
	// want maps a record id to the statuses it may have now: one after an
	// acknowledged change, any when a change to it was in flight at a crash
	// (it may or may not have committed).
	want map[string][]string
	// superseded maps an acknowledged supersede's old record to the new one.
	superseded map[string]string
}

func newLedger() *ledger {
	return &ledger{want: map[string][]string{}, superseded: map[string]string{}}
}

// is records that an acknowledged mutation left id with status.
func (l *ledger) is(id, status string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.want[id] = []string{status}
}

// inFlight records that a change to ids got no answer: each may have any
// status now, but acknowledged records must still exist.
func (l *ledger) inFlight(ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, ok := l.want[id]; ok {
			l.want[id] = []string{"active", "contested", "retracted", "superseded"}
		}
	}
}

func (l *ledger) supersede(oldID, newID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.superseded[oldID] = newID
	l.want[oldID] = []string{"superseded"}
	l.want[newID] = []string{"active"}
}

func (l *ledger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.want)
}

// verify checks, with the shared test store, that every acknowledged record
// exists with an allowed status (in bulk, one query per 5,000 ids), that the
// scope keeps the structural invariants (neo4j.DB.CheckInvariants), and,
// through srv, that a sample of acknowledged supersedes reads back as such.
func (l *ledger) verify(t *testing.T, srv *server, sc string) {
	t.Helper()
	l.verifyIn(t, neo4jtest.DB(t), srv, sc)
}

// verifyIn is verify against db, for tests that run a Neo4j of their own.
// It returns how many acknowledged records are missing and how many have a
// status no acknowledged change left them in. A nil srv skips the sample
// read through the API (the server is gone).
func (l *ledger) verifyIn(t *testing.T, db *neo4j.DB, srv *server, sc string) (lost, wrong int) {
	t.Helper()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.want))
	for id := range l.want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	got := map[string]string{}
	for chunk := range slices.Chunk(ids, 5000) {
		st, err := db.RecordStatuses(ctx, chunk)
		if err != nil {
			t.Fatal(err)
		}
		for id, s := range st {
			got[id] = s
		}
	}
	for _, id := range ids {
		s, ok := got[id]
		switch {
		case !ok:
			if lost++; lost <= 10 {
				t.Errorf("acknowledged record %s is missing", id)
			}
		case !slices.Contains(l.want[id], s):
			if wrong++; wrong <= 10 {
				t.Errorf("record %s is %s, want one of %v", id, s, l.want[id])
			}
		}
	}
	if lost+wrong > 0 {
		t.Errorf("%d of %d acknowledged records lost, %d with the wrong status", lost, len(ids), wrong)
	}

	violations, err := db.CheckInvariants(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("invariant violated: %s", v)
	}

	// A sample through the API: the new record SUPERSEDES the old one.
	olds := make([]string, 0, len(l.superseded))
	for old := range l.superseded {
		olds = append(olds, old)
	}
	sort.Strings(olds)
	if srv == nil {
		olds = nil
	}
	rand.Shuffle(len(olds), func(i, j int) { olds[i], olds[j] = olds[j], olds[i] })
	for _, old := range olds[:min(len(olds), 10)] {
		var out struct {
			Record struct{ SupersededBy *struct{ ID string } }
		}
		srv.do(t, `query($id: ID!) { record(id: $id) { supersededBy { id } } }`, map[string]any{"id": old}, &out)
		if by := out.Record.SupersededBy; by == nil || by.ID != l.superseded[old] {
			t.Errorf("record %s superseded by %v, want %s", old, by, l.superseded[old])
		}
	}
	t.Logf("verified %d acknowledged records (%d supersedes sampled %d) and the invariants of %s in %s",
		len(ids), len(olds), min(len(olds), 10), sc, time.Since(t0).Round(time.Millisecond))
	return lost, wrong
}

// cleanupScope deletes the scope's records when the test ends, unless it
// failed (they are then kept to look at): the load test writes thousands.
func cleanupScope(t *testing.T, sc string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept the records of %s for inspection", sc)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		t0 := time.Now()
		if err := neo4jtest.DB(t).DeleteScope(ctx, sc); err != nil {
			t.Errorf("delete scope %s: %v", sc, err)
		}
		t.Logf("deleted scope %s in %s", sc, time.Since(t0).Round(time.Millisecond))
	})
}

// String is for failure messages.
func (l *ledger) String() string { return fmt.Sprintf("ledger of %d records", l.size()) }
