package neo4j_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BenchmarkIngestFloor writes batches of 1,000 episodic records, as
// cmd/bench's ingestBatch does, six ways, one client, to separate what
// the store adds from what Neo4j costs for the data alone
// (docs/BENCHMARKS.md, "Served latency"):
//
//   - service: IngestService.CreateRecords as ingestBatch's resolver runs it
//     (BuildRecord, the properties, create_records, COMMIT);
//   - store: neo4j.DB.CreateRecords of records already built;
//   - sequence: the change feed numbering up to 1,000 committed audit
//     entries (DB.SequenceEvents), after an untimed store op wrote them;
//     numbered/op says how many it numbered (fewer when a server's feed
//     on the same database numbered some first: run it with none);
//   - no-indexes: the same rows (record and audit properties) written by
//     a bare driver with no index, no constraint and no full-text index on
//     their labels: record node, audit node, relationship, COMMIT;
//   - records-only: the record nodes of the same rows alone;
//   - one-property: 1,000 nodes of one property each: the least a
//     1,000-node write costs here.
//
// Every op is one transaction. It reports p50 and p99 per op and the
// records/s of the p50; the untimed part of each op builds its batch and
// deletes the floor ways' nodes. Run on an idle machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench IngestFloor -benchtime 20x ./internal/neo4j/
func BenchmarkIngestFloor(b *testing.B) {
	db := neo4jtest.DB(b)
	scope := neo4jtest.Scope(b)
	neo4jtest.DeleteAtEnd(b, db, scope)
	svc, ctx, _ := benchServices(context.Background(), db, scope)
	const size = 1000
	n := 0
	numbered := 0 // entries the sequence way numbered in one run, warm-up ops included
	inputs := func() []*membrane.RecordInput {
		batch := make([]*membrane.RecordInput, size)
		for i := range batch {
			n++
			batch[i] = &membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: ptr(scope), Payload: membrane.PayloadInput{
				Episodic: &membrane.EpisodicPayload{Timeline: []membrane.TimelineEvent{{T: t0.Add(time.Duration(n) * time.Second),
					EventKind: "observation", Ref: fmt.Sprint("bench-", n), Summary: fmt.Sprintf("deploy rollback after the incident of service-%d", n%97)}}}}}
		}
		return batch
	}
	built := func(b *testing.B) []*membrane.Ingested {
		now := time.Now()
		out := make([]*membrane.Ingested, 0, size)
		for _, in := range inputs() {
			r, err := membrane.DefaultPolicy().BuildRecord(*in, now)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "bench", "bench", now)})
		}
		return out
	}
	rows := func(b *testing.B) []map[string]any {
		r, err := db.CreateRows(built(b))
		if err != nil {
			b.Fatal(err)
		}
		return r
	}

	sess := bareSession(b, driver.AccessModeWrite)
	// The floor ways' labels have no index: a label of their own, which no
	// schema statement names. Their nodes are deleted between ops.
	const floorLabels = `IngestFloor|IngestFloorAudit`
	write := func(stmt string, params map[string]any) error {
		_, err := sess.ExecuteWrite(ctx, func(tx driver.ManagedTransaction) (any, error) {
			res, err := tx.Run(ctx, stmt, params)
			if err != nil {
				return nil, err
			}
			s, err := res.Consume(ctx)
			if err == nil && s.Counters().NodesCreated() < size {
				err = fmt.Errorf("%d nodes created, want at least %d", s.Counters().NodesCreated(), size)
			}
			return nil, err
		})
		return err
	}
	clearFloor := func() error {
		res, err := sess.Run(ctx, `MATCH (n:`+floorLabels+`) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS`, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		return err
	}
	b.Cleanup(func() { _ = clearFloor() })
	ids := make([]any, size)
	for i := range ids {
		ids[i] = int64(i)
	}

	for _, bm := range []struct {
		name string
		// prepare builds an op's input, untimed; the returned op is timed.
		prepare func(b *testing.B) func() error
	}{
		{"service", func(b *testing.B) func() error {
			in := inputs()
			return func() error { _, err := svc.Ingest.CreateRecords(ctx, in, ptr("bench"), nil, "inputs"); return err }
		}},
		{"store", func(b *testing.B) func() error {
			in := built(b)
			return func() error { _, err := db.CreateRecords(ctx, nil, in); return err }
		}},
		{"sequence", func(b *testing.B) func() error {
			if _, err := db.CreateRecords(ctx, nil, built(b)); err != nil {
				b.Fatal(err)
			}
			return func() error {
				// Another process's change feed on the same database (a
				// test server) may number some of them first: the count
				// is reported, not required.
				n, _, err := db.SequenceEvents(ctx, "bench", size)
				numbered += n
				return err
			}
		}},
		{"no-indexes", func(b *testing.B) func() error {
			p := map[string]any{"records": rows(b)}
			return func() error {
				return write(`UNWIND $records AS r CREATE (m:IngestFloor) SET m = r.props
					CREATE (a:IngestFloorAudit) SET a = r.audit CREATE (m)-[:HAS_AUDIT]->(a)`, p)
			}
		}},
		{"records-only", func(b *testing.B) func() error {
			p := map[string]any{"records": rows(b)}
			return func() error { return write(`UNWIND $records AS r CREATE (m:IngestFloor) SET m = r.props`, p) }
		}},
		{"one-property", func(b *testing.B) func() error {
			return func() error {
				return write(`UNWIND $ids AS i CREATE (:IngestFloor {i: i})`, map[string]any{"ids": ids})
			}
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			numbered = 0 // the function runs again for each b.N the framework tries
			var lat []time.Duration
			for i := 0; i < b.N+3; i++ { // three untimed ops first: plans cached, the JIT warm
				b.StopTimer()
				if err := clearFloor(); err != nil {
					b.Fatal(err)
				}
				op := bm.prepare(b)
				if i >= 3 {
					b.StartTimer()
				}
				start := time.Now()
				if err := op(); err != nil {
					b.Fatal(err)
				}
				if i >= 3 {
					lat = append(lat, time.Since(start))
				}
			}
			b.StopTimer()
			reportPercentiles(b, lat)
			if bm.name == "sequence" {
				b.ReportMetric(float64(numbered)/float64(b.N+3), "numbered/op")
				return
			}
			b.ReportMetric(float64(size)/lat[len(lat)/2].Seconds(), "records/s")
		})
	}
}
