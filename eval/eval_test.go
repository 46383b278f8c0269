package eval_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/eval"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// floors are the eval's floors per configuration, a step below what was
// measured: one of the 22 queries' records crossing rank 5 moves recall@5
// by 0.015 to 0.023, and the shared full-text index's statistics (BM25's
// document frequencies are the whole index's) move with what the test
// database holds. Measured: recall@5 on full text 0.985 (0.909 once when
// the eval ran beside the other packages' tests), with vectors 0.962 on a
// fresh Neo4j holding only the evals (as scripts/test.sh runs them); MRR
// 1.000 and nDCG@10 0.92-0.96. A change that lowers them fails.
var floors = map[string]struct{ recall5, mrr, ndcg10 float64 }{
	"text":    {recall5: 0.89, mrr: 0.95, ndcg10: 0.91},
	"vectors": {recall5: 0.91, mrr: 0.95, ndcg10: 0.91},
}

// targetRecall5 is the target recall@5, a gate in the default
// configuration (vectors; measured 0.962 on the fresh database the evals
// run on), on full text checked with MEMBRANE_EVAL_TARGET set.
const targetRecall5 = 0.95

// TestRetrievalQuality loads the fixture into a scope of its own in the
// real Neo4j and reports recall@1, recall@5, recall@10, MRR and nDCG@10 of
// retrieve for every query, with their means, once per configuration (full
// text and graph; with the offline embedder's vectors when
// MEMBRANE_EVAL_EMBEDDER names it), each against its floors, and the
// default configuration (vectors) against targetRecall5.
func TestRetrievalQuality(t *testing.T) {
	f, err := eval.LoadFixture("fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	deleteScopeAtEnd(t, db, scope)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("eval"))
	now := time.Now().UTC()
	keyOf := map[string]string{}
	var batch []*membrane.Ingested
	for _, fr := range f.Records {
		r, err := fr.Record(membrane.DefaultPolicy(), scope, now)
		if err != nil {
			t.Fatal(err)
		}
		keyOf[r.ID] = fr.Key
		batch = append(batch, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "eval", "fixture", now)})
	}
	emb := evalEmbedder(t, db)
	embedBatch(t, emb, batch)
	if _, err := db.CreateRecords(ctx, nil, batch); err != nil {
		t.Fatal(err)
	}
	idOf := map[string]string{}
	for id, key := range keyOf {
		idOf[key] = id
	}
	relate := membrane.NewServices(membrane.Stores{Revisions: db}, membrane.ServiceOptions{Policy: membrane.DefaultPolicy()}).Relate
	for _, e := range f.Edges() {
		if _, err := relate.AddRelation(ctx, idOf[e.From], e.Predicate, idOf[e.To], nil, membrane.RevisionArgs{}); err != nil {
			t.Fatalf("%s -%s-> %s: %v", e.From, e.Predicate, e.To, err)
		}
	}
	if err := db.AwaitSearchIndexes(ctx); err != nil {
		t.Fatal(err)
	}

	for _, cfg := range configurations(emb) {
		t.Run(cfg.name, func(t *testing.T) {
			if cfg.skip != "" {
				t.Skip(cfg.skip)
			}
			var sumR1, sumR5, sumR10, sumRR, sumNDCG float64
			var report strings.Builder
			fmt.Fprintf(&report, "\n%s\n%-48s %6s %6s %6s %6s %7s  top 3; relevant records below 5 (their rank)\n", cfg.name, "query", "R@1", "R@5", "R@10", "RR", "nDCG10")
			limit := int64(10)
			for _, q := range f.Queries {
				rq, err := membrane.NewRetrieveQuery(&q.Q, nil, []string{scope}, nil, &limit, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.vectors {
					embedQuery(t, emb, &rq)
				}
				res, err := db.Retrieve(ctx, rq, membrane.DefaultSelectionThreshold)
				if err != nil {
					t.Fatal(err)
				}
				ranked := make([]string, len(res.Hits))
				for i, h := range res.Hits {
					ranked[i] = keyOf[h.ID]
					if ranked[i] == "f-billing-mysql-old" {
						t.Errorf("%q: a retracted record was retrieved", q.Q)
					}
				}
				r1, r5, r10 := eval.RecallAt(ranked, q.Relevant, 1), eval.RecallAt(ranked, q.Relevant, 5), eval.RecallAt(ranked, q.Relevant, 10)
				rr, nd := eval.ReciprocalRank(ranked, q.Relevant), eval.NDCGAt(ranked, q.Relevant, 10)
				sumR1, sumR5, sumR10, sumRR, sumNDCG = sumR1+r1, sumR5+r5, sumR10+r10, sumRR+rr, sumNDCG+nd
				fmt.Fprintf(&report, "%-48s %6.2f %6.2f %6.2f %6.2f %7.3f  %s%s\n", q.Q, r1, r5, r10, rr, nd, strings.Join(ranked[:min(3, len(ranked))], ", "), missedAt5(ranked, q.Relevant))
			}
			n := float64(len(f.Queries))
			r1, r5, r10, mrr, ndcg := sumR1/n, sumR5/n, sumR10/n, sumRR/n, sumNDCG/n
			fmt.Fprintf(&report, "%-48s %6.3f %6.3f %6.3f %6.3f %7.3f\n", fmt.Sprintf("MEAN over %d queries, %d records", len(f.Queries), len(f.Records)), r1, r5, r10, mrr, ndcg)
			t.Log(report.String())
			fl := floors[cfg.name]
			if r5 < fl.recall5 || mrr < fl.mrr || ndcg < fl.ndcg10 {
				t.Errorf("below the floors: recall@5 %.3f (min %.2f), MRR %.3f (min %.2f), nDCG@10 %.3f (min %.2f)", r5, fl.recall5, mrr, fl.mrr, ndcg, fl.ndcg10)
			}
			if (cfg.target || os.Getenv("MEMBRANE_EVAL_TARGET") != "") && r5 < targetRecall5 {
				t.Errorf("below the target: recall@5 %.3f, want >= %.2f", r5, targetRecall5)
			}
		})
	}
}

// missedAt5 names the relevant records ranked below 5, each with its rank
// (or "-" when not returned), so that a report says which records a query
// misses, not only by how much.
func missedAt5(ranked []string, rel eval.Relevance) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rel)) {
		switch i := slices.Index(ranked, k); {
		case i < 0:
			out = append(out, k+" -")
		case i >= 5:
			out = append(out, fmt.Sprintf("%s %d", k, i+1))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; below 5: " + strings.Join(out, ", ")
}
