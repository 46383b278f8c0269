package neo4j_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// BenchmarkMentionLinking writes one record, and batches of 256, of about
// fifteen words each, by the store (DB.CreateRecords), in scopes of 0, 100,
// 1,000 and 3,000 entities named by two words each, some of which every
// text names, and reports ms per write: what linking the mentions found in
// text costs as a scope's entities grow (membrane.EntitiesReadWhole picks
// reading them whole or looking the texts' names up). Run on an idle
// machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench MentionLinking -benchtime 30x ./internal/neo4j/
func BenchmarkMentionLinking(b *testing.B) {
	db := neo4jtest.DB(b)
	words := strings.Fields("deploy rollback incident billing service database failover alert budget review " +
		"certificate rotation onboarding plan flaky test cache latency queue backlog")
	n := 0
	text := func() string {
		n++
		w := make([]string, 14)
		for j := range w {
			w[j] = words[(n*5+j*j+j)%len(words)]
		}
		return fmt.Sprintf("%s %d", strings.Join(w, " "), n)
	}
	for _, entities := range []int{0, 100, 1000, 3000} {
		scope := neo4jtest.Scope(b)
		neo4jtest.DeleteAtEnd(b, db, scope)
		var es []membrane.RecordInput
		for i := range entities {
			// Two vocabulary words, then a number past the first 400 pairs:
			// the texts name about 100 of every 400.
			name := words[i%len(words)] + " " + words[i/len(words)%len(words)]
			if i >= len(words)*len(words) {
				name += fmt.Sprint(" ", i)
			}
			es = append(es, membrane.RecordInput{Type: membrane.TypeEntity, Scope: ptr(scope), Payload: membrane.PayloadInput{
				Entity: &membrane.EntityPayload{CanonicalName: name, PrimaryType: "Thing"}}})
		}
		for chunk := range slices.Chunk(es, 1000) {
			neo4jtest.Create(b, db, t0, chunk...)
		}
		if err := db.AwaitSearchIndexes(b.Context()); err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{1, 256} {
			b.Run(fmt.Sprintf("entities=%d/records=%d", entities, size), func(b *testing.B) {
				var busy time.Duration
				for b.Loop() {
					batch := make([]*membrane.Ingested, size)
					for i := range batch {
						r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: ptr(scope),
							Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{Timeline: []membrane.TimelineEvent{
								{T: t0, EventKind: "observation", Summary: text()}}}}}, t0)
						if err != nil {
							b.Fatal(err)
						}
						batch[i] = &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "bench", "", t0)}
					}
					start := time.Now()
					if _, err := db.CreateRecords(sysCtx(), nil, batch); err != nil {
						b.Fatal(err)
					}
					busy += time.Since(start)
				}
				b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "ms/write")
			})
		}
	}
}
