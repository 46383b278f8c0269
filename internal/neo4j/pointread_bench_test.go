package neo4j_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BenchmarkPointReadFloor reads one record by id five ways, one client, to
// separate the store's cost from Neo4j's floor (docs/BENCHMARKS.md,
// "Served latency"):
//
//   - http-store: the store's read behind the least HTTP server (a bare
//     handler answering five fields as JSON, a keep-alive client on
//     loopback): the floor of a point read through any HTTP API here;
//   - store: neo4j.DB.FindRecordByID as a request runs it (record_by_id with
//     the trust gate, one auto-commit statement, the record decoded);
//   - record_by_id: the same statement and parameters through the bare
//     driver in a managed read transaction (BEGIN with RUN, then COMMIT);
//   - bare: MATCH by id, properties(m), managed, the smallest read;
//   - bare auto-commit: the same as one auto-commit RUN (one round trip,
//     no driver retry).
//
// It reports p50 and p99 per op besides ns/op. Run on an idle machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench PointReadFloor -benchtime 4000x ./internal/neo4j/
func BenchmarkPointReadFloor(b *testing.B) {
	db := neo4jtest.DB(b)
	ctx := sysCtx()
	r, err := membrane.DefaultPolicy().BuildRecord(fact(neo4jtest.Scope(b), "point read", 0.5, nil), t0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{{Record: r,
		Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "bench", "", t0)}}); err != nil {
		b.Fatal(err)
	}
	rec := r.ID
	sess := bareSession(b, driver.AccessModeRead)
	managed := func(stmt string, params map[string]any) func() error {
		return func() error {
			n, err := sess.ExecuteRead(ctx, func(tx driver.ManagedTransaction) (any, error) {
				res, err := tx.Run(ctx, stmt, params)
				if err != nil {
					return nil, err
				}
				rows, err := res.Collect(ctx)
				return len(rows), err
			})
			if err == nil && n.(int) != 1 {
				b.Fatalf("%d rows, want 1", n)
			}
			return err
		}
	}
	gated := neo4j.TrustParams(membrane.TrustFromContext(ctx))
	gated["id"] = rec
	bare := `MATCH (m:Memory {id: $id}) RETURN properties(m) AS m`
	// The least HTTP in front of the store: a handler that reads the record
	// as the store does and answers the fields cmd/bench's point read asks
	// for, with a keep-alive client on loopback.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, err := db.FindRecordByID(ctx, r.URL.Query().Get("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": m.ID, "type": m.Type, "version": m.Version,
			"confidence": m.Confidence, "salience": m.Salience})
	}))
	b.Cleanup(srv.Close)
	client := srv.Client()
	for _, bm := range []struct {
		name string
		op   func() error
	}{
		{"http-store", func() error {
			res, err := client.Get(srv.URL + "/?id=" + rec)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			var out struct{ ID string }
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.ID != rec {
				return fmt.Errorf("answer %d %q: %v", res.StatusCode, out.ID, err)
			}
			return nil
		}},
		{"store", func() error { _, err := db.FindRecordByID(ctx, rec); return err }},
		{"record_by_id", managed(cypher.Must("record_by_id"), gated)},
		{"bare", managed(bare, map[string]any{"id": rec})},
		{"bare-auto-commit", func() error {
			res, err := sess.Run(ctx, bare, map[string]any{"id": rec})
			if err != nil {
				return err
			}
			_, err = res.Single(ctx)
			return err
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for range 200 { // warm-up: plans cached, connections open
				if err := bm.op(); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := bm.op(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportPercentiles(b, lat)
		})
	}
}

// bareSession opens a session of a driver of its own on the test database
// (NEO4J_URI), both closed when b ends: the floor benchmarks' way to Neo4j
// past the store.
func bareSession(b *testing.B, mode driver.AccessMode) driver.SessionWithContext {
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close(context.Background()) })
	sess := d.NewSession(context.Background(), driver.SessionConfig{AccessMode: mode, DatabaseName: cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j")})
	b.Cleanup(func() { sess.Close(context.Background()) })
	return sess
}

// reportPercentiles reports the p50 and p99 of lat (nearest rank) beside
// ns/op.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
