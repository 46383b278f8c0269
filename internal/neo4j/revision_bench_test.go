package neo4j_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BenchmarkRevisionFloor runs single revisions through the membrane
// services against the store, one client, beside Neo4j's own floor for a
// write, to separate the store's cost from the database's
// (docs/BENCHMARKS.md, "Revisions"):
//
//   - contest, supersede: svc.Revise as a request runs it (two auto-commit
//     statements: revise_read, then apply_change guarded by what it read),
//     each of a distinct active fact written before timing;
//   - create: svc.Ingest.CreateRecord of one fact (create_records, COMMIT);
//   - contest-floor: the writes of a contest (contestFloor) through the
//     bare driver as one statement, then COMMIT: what the data of a
//     contest costs without the lock's round trip or apply_change's plan;
//   - contest-two-trips: an optimistic contest's floor, two auto-commit
//     statements: the record read by record_by_id, then contestFloor
//     guarded by the version read (no BEGIN, no COMMIT message);
//   - bare-write: a managed write transaction that creates one node with
//     one property and nothing else (no index but the label lookup), then
//     COMMIT: the least a write costs here.
//
// It reports p50 and p99 per op besides ns/op. Run on an idle machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench RevisionFloor -benchtime 2000x ./internal/neo4j/
func BenchmarkRevisionFloor(b *testing.B) {
	db := neo4jtest.DB(b)
	scope := neo4jtest.Scope(b)
	neo4jtest.DeleteAtEnd(b, db, scope)
	svc, ctx, benchFact := benchServices(context.Background(), db, scope)
	// pool writes n active facts with one ingest and returns their ids.
	pool := func(b *testing.B, n int) []string {
		batch := make([]*membrane.RecordInput, n)
		for i := range batch {
			in := benchFact(fmt.Sprint("pool-", membrane.NewID()))
			batch[i] = &in
		}
		recs, err := svc.Ingest.CreateRecords(ctx, batch, ptr("bench"), nil, "inputs")
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		return ids
	}

	sess := bareSession(b, driver.AccessModeWrite)
	b.Cleanup(func() { _, _ = sess.Run(context.Background(), `MATCH (n:BenchWriteFloor) DELETE n`, nil) })

	for _, bm := range []struct {
		name string
		op   func(b *testing.B, ids []string, i int) error
	}{
		{"contest", func(b *testing.B, ids []string, i int) error {
			_, err := svc.Revise.Contest(ctx, ids[i], fmt.Sprint("ticket-", i), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"supersede", func(b *testing.B, ids []string, i int) error {
			_, err := svc.Revise.Supersede(ctx, ids[i], benchFact(fmt.Sprint("next-", i)), membrane.RevisionArgs{Actor: ptr("bench")})
			return err
		}},
		{"create", func(b *testing.B, _ []string, i int) error {
			_, err := svc.Ingest.CreateRecord(ctx, benchFact(fmt.Sprint("created-", i)), ptr("bench"), nil)
			return err
		}},
		{"contest-floor", func(b *testing.B, ids []string, i int) error {
			a := membrane.NewAuditEntry(ids[i], membrane.AuditContest, "bench", "contested by external reference ticket", time.Now())
			a.Previous = map[string]any{"status": "active", "version": int64(1)}
			props, err := db.AuditProps(a, membrane.SensitivityLow)
			if err != nil {
				return err
			}
			_, err = sess.ExecuteWrite(ctx, func(tx driver.ManagedTransaction) (any, error) {
				res, err := tx.Run(ctx, contestFloor, map[string]any{"id": ids[i], "version": nil, "ref": fmt.Sprint("ticket-", i), "audit": props})
				if err != nil {
					return nil, err
				}
				s, err := res.Consume(ctx)
				if err == nil && s.Counters().NodesCreated() != 1 {
					err = fmt.Errorf("%d nodes created, want 1", s.Counters().NodesCreated())
				}
				return nil, err
			})
			return err
		}},
		{"contest-two-trips", func(b *testing.B, ids []string, i int) error {
			read := neo4j.TrustParams(membrane.TrustFromContext(ctx))
			read["id"] = ids[i]
			res, err := sess.Run(ctx, cypher.Must("record_by_id"), read)
			if err != nil {
				return err
			}
			row, err := res.Single(ctx)
			if err != nil {
				return err
			}
			m, _ := row.Values[0].(map[string]any)
			a := membrane.NewAuditEntry(ids[i], membrane.AuditContest, "bench", "contested by external reference ticket", time.Now())
			a.Previous = map[string]any{"status": m["status"], "version": m["version"]}
			props, err := db.AuditProps(a, membrane.SensitivityLow)
			if err != nil {
				return err
			}
			res, err = sess.Run(ctx, contestFloor, map[string]any{"id": ids[i], "version": m["version"], "ref": fmt.Sprint("ticket-", i), "audit": props})
			if err != nil {
				return err
			}
			sum, err := res.Consume(ctx)
			if err == nil && sum.Counters().NodesCreated() != 1 {
				err = fmt.Errorf("%d nodes created, want 1", sum.Counters().NodesCreated())
			}
			return err
		}},
		{"bare-write", func(b *testing.B, _ []string, i int) error {
			_, err := sess.ExecuteWrite(ctx, func(tx driver.ManagedTransaction) (any, error) {
				res, err := tx.Run(ctx, `CREATE (n:BenchWriteFloor {i: $i})`, map[string]any{"i": i})
				if err != nil {
					return nil, err
				}
				return res.Consume(ctx)
			})
			return err
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			const warm = 200 // plans cached, connections open
			ids := pool(b, warm)
			for i := range warm {
				if err := bm.op(b, ids, i); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			i := warm
			for b.Loop() {
				if i == len(ids) { // b.N is not known before the loop
					b.StopTimer()
					ids = append(ids, pool(b, 500)...)
					b.StartTimer()
				}
				start := time.Now()
				if err := bm.op(b, ids, i); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			reportPercentiles(b, lat)
		})
	}
}

// contestFloor writes what a contest writes, as one statement with no lock
// and no plan read first: the record's status, version, updatedAt and
// evidence, an audit entry of the same properties, labels and indexes,
// and its HAS_AUDIT. With $version, only if the record still has that
// version (the SET takes the record's write lock first).
const contestFloor = `MATCH (m:Memory {id: $id})
WHERE $version IS NULL OR m.version = $version
SET m.status = 'contested', m.version = m.version + 1, m.updatedAt = datetime(),
    m.contestEvidence = m.contestEvidence + $ref
CREATE (a:AuditEntry:Unsequenced)
SET a = $audit, a.scope = m.scope, a.sensitivityLevel = m.sensitivityLevel, a.recordType = m.type
CREATE (m)-[:HAS_AUDIT]->(a)`

// BenchmarkLineageFloor reads the ancestry of the head of a 100-deep
// supersede chain (101 records, 100 edges) through the read service as a
// request does: one managed read transaction, the records decoded. Run on
// an idle machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench LineageFloor -benchtime 400x ./internal/neo4j/
func BenchmarkLineageFloor(b *testing.B) {
	db := neo4jtest.DB(b)
	scope := neo4jtest.Scope(b)
	neo4jtest.DeleteAtEnd(b, db, scope)
	svc, ctx, benchFact := benchServices(context.Background(), db, scope)
	r, err := svc.Ingest.CreateRecord(ctx, benchFact("chain-0"), ptr("bench"), nil)
	if err != nil {
		b.Fatal(err)
	}
	head := r.ID
	for i := range 100 {
		r, err := svc.Revise.Supersede(ctx, head, benchFact(fmt.Sprint("chain-", i+1)), membrane.RevisionArgs{Actor: ptr("bench")})
		if err != nil {
			b.Fatal(err)
		}
		head = r.ID
	}
	q, err := membrane.NewLineageQuery(ptr(membrane.DirOut), nil, ptr(int64(100)), ptr(int64(200)), nil)
	if err != nil {
		b.Fatal(err)
	}
	op := func() {
		l, err := svc.Read.Lineage(ctx, head, q)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Nodes) != 101 || len(l.Edges) != 100 {
			b.Fatalf("lineage has %d nodes and %d edges, want 101 and 100", len(l.Nodes), len(l.Edges))
		}
	}
	for range 50 { // plans cached, connections open
		op()
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		op()
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}
