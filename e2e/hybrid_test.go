package e2e_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// TestHybridByDefault: the binary with no embedding settings, as the
// README runs it, searches by vectors with the model inside Neo4j: a
// question that shares no word with the record it asks about finds it, and
// the result says the vector took part. New records are embedded in the
// background: a graceful stop writes the vectors still queued, so after a
// restart the records have them. Outside CI it is skipped when the
// test Neo4j has no model (one started before scripts/neo4j.sh installed
// it); in CI the test Neo4j always has it.
func TestHybridByDefault(t *testing.T) {
	db := openOwnStore(t, os.Getenv("NEO4J_URI"))
	if _, err := db.InDatabaseEmbedder(t.Context()); errors.Is(err, neo4j.ErrNoEmbedder) && os.Getenv("CI") != "true" {
		t.Skip("the test Neo4j has no embedding model: restart it with scripts/neo4j.sh (NEO4J_EMBED=on)")
	} else if err != nil {
		t.Fatal(err)
	}
	// The harness turns vector search off; clearing the setting leaves
	// the default.
	srv := startProcess(t, apptest.Options{APIKey: "e2e-key-" + membrane.NewID(), EncryptionKey: newEncryptionKey(t),
		Env: []string{"MEMBRANE_EMBEDDING_PROVIDER="}})
	if log := srv.Log.String(); !strings.Contains(log, "vector search on") || !strings.Contains(log, "all-minilm") {
		t.Fatalf("the server did not say vector search is on with the model inside Neo4j:\n%s", tail(log, 20))
	}
	sc := scope(t)
	var c struct {
		CaptureMemory struct{ Primary struct{ ID string } }
	}
	srv.do(t, `mutation($s: String) { captureMemory(input: {source: "e2e", content: "Dana cannot eat peanuts, she carries an epinephrine pen", scope: $s}) { primary { id } } }`,
		map[string]any{"s": sc}, &c)
	for _, in := range []string{"the stand-up moved to 9:30 on Tuesdays", "the VPN certificate expires in March"} {
		srv.do(t, `mutation($s: String, $c: JSON!) { captureMemory(input: {source: "e2e", content: $c, scope: $s}) { primary { id } } }`,
			map[string]any{"s": sc, "c": in}, nil)
	}
	srv.Stop(t)
	if log := srv.Log.String(); !strings.Contains(log, "shutdown: services stopped") {
		t.Fatalf("the server did not say its services stopped:\n%s", tail(log, 20))
	}
	srv.Restart()
	var r struct {
		Retrieve struct {
			VectorUsed bool
			Hits       []struct {
				Record struct{ ID string }
				Parts  struct {
					Text   float64
					Vector *float64
				}
			}
		}
	}
	srv.do(t, `query($s: [String!]) { retrieve(input: {query: "which colleague has a food allergy", scopes: $s, limit: 3}) {
		vectorUsed hits { record { id } parts { text vector } } } }`, map[string]any{"s": []string{sc}}, &r)
	hits := r.Retrieve.Hits
	if !r.Retrieve.VectorUsed || len(hits) == 0 || hits[0].Record.ID != c.CaptureMemory.Primary.ID || hits[0].Parts.Vector == nil || hits[0].Parts.Text != 0 {
		t.Fatalf("vectorUsed %v, hits %+v: want the allergy first, found by its vector alone", r.Retrieve.VectorUsed, hits)
	}
}

// TestVectorsForExistingRecords: records written while vector search was
// off get vectors once it is on, from the embed job's run at start, without
// the start waiting for it: a question that shares no word with such a
// record then finds it by its vector.
func TestVectorsForExistingRecords(t *testing.T) {
	db := openOwnStore(t, os.Getenv("NEO4J_URI"))
	if _, err := db.InDatabaseEmbedder(t.Context()); errors.Is(err, neo4j.ErrNoEmbedder) && os.Getenv("CI") != "true" {
		t.Skip("the test Neo4j has no embedding model: restart it with scripts/neo4j.sh (NEO4J_EMBED=on)")
	} else if err != nil {
		t.Fatal(err)
	}
	sc := scope(t)
	key := "e2e-key-" + membrane.NewID()
	encKey := newEncryptionKey(t)
	// Written with vector search off (the harness's setting).
	off := startProcess(t, apptest.Options{APIKey: key, EncryptionKey: encKey})
	var c struct {
		CaptureMemory struct{ Primary struct{ ID string } }
	}
	off.do(t, `mutation($s: String) { captureMemory(input: {source: "e2e", content: "Dana cannot eat peanuts, she carries an epinephrine pen", scope: $s}) { primary { id } } }`,
		map[string]any{"s": sc}, &c)
	off.do(t, `mutation($s: String) { captureMemory(input: {source: "e2e", content: "the VPN certificate expires in March", scope: $s}) { primary { id } } }`,
		map[string]any{"s": sc}, nil)
	off.Stop(t)

	// Started with the default model and the embed job (restricted to this
	// test's scope: the test database is shared).
	on := startProcess(t, apptest.Options{APIKey: key, EncryptionKey: encKey,
		Env: []string{"MEMBRANE_EMBEDDING_PROVIDER=", "MEMBRANE_JOBS_EMBED=@every 10m", "MEMBRANE_JOBS_SCOPES=" + sc}})
	type run struct {
		Scopes  []string
		Outcome *string
		Changed int
		Error   *string
	}
	var done *run
	deadline := time.Now().Add(time.Minute)
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for ; done == nil; <-poll.C {
		var r struct{ JobRuns struct{ Nodes []run } }
		on.do(t, `{ jobRuns(job: EMBED, first: 50) { nodes { scopes outcome changed error } } }`, nil, &r)
		for _, n := range r.JobRuns.Nodes {
			if len(n.Scopes) == 1 && n.Scopes[0] == sc && n.Outcome != nil {
				done = &n
			}
		}
		if done == nil && time.Now().After(deadline) {
			t.Fatalf("no finished embed run for the scope within a minute of the start:\n%s", tail(on.Log.String(), 20))
		}
	}
	if *done.Outcome != "SUCCEEDED" || done.Changed < 2 {
		t.Fatalf("embed run at start: %+v, want SUCCEEDED with the 2 records (at least) embedded", *done)
	}
	var r struct {
		Retrieve struct {
			VectorUsed bool
			Hits       []struct {
				Record struct{ ID string }
				Parts  struct{ Vector *float64 }
			}
		}
	}
	on.do(t, `query($s: [String!]) { retrieve(input: {query: "which colleague has a food allergy", scopes: $s, limit: 3}) {
		vectorUsed hits { record { id } parts { vector } } } }`, map[string]any{"s": []string{sc}}, &r)
	if hits := r.Retrieve.Hits; !r.Retrieve.VectorUsed || len(hits) == 0 || hits[0].Record.ID != c.CaptureMemory.Primary.ID || hits[0].Parts.Vector == nil {
		t.Fatalf("vectorUsed %v, hits %+v: want the allergy first, found by the vector the embed job gave it", r.Retrieve.VectorUsed, hits)
	}
}
