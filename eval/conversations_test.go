package eval_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/membrane/membrane/eval"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

const (
	// retrieveLimit is the limit of every retrieve and baseline search.
	retrieveLimit = 20
)

// TestConversations loads every conversation of conversations/ into a
// scope of its own (one EPISODIC record per turn: one timeline event, the
// speaker as its kind, the turn id as its ref, the line as its summary,
// the session as sessionId, created when it was said), asks every question
// through retrieve (EPISODIC, limit 20, ranked at the conversation's Asked
// instant) and through a stemmed BM25 over the same texts, and prints both
// systems' metrics per category, once per configuration (full text and
// graph; and with the offline embedder's vectors when MEMBRANE_EVAL_EMBEDDER
// names it, as scripts/test.sh does, where BM25 and the same vectors fused
// by reciprocal rank are printed too). Each fails when retrieve is below
// the stemmed BM25 on recall@5, recall@10 or MRR, and the default
// configuration (vectors) also on session recall@10 (eval.Gate: on full
// text alone the two cover the same sessions to within the ±0.005 the
// shared index's statistics move them, 0.967–0.971 against 0.968, so a
// gate there would fail by chance); with vectors, also when its recall@10 is below
// eval.TargetGain times the baseline's, which without vectors is checked
// only with MEMBRANE_EVAL_TARGET set. Each configuration then asks every
// question again with every conversation in one memory (pooled: all the
// scopes, as of the question's asking), under the same gates, and with
// vectors also fails when retrieve's session recall@10 there is short of
// the baseline's plus eval.SessionGain. MEMBRANE_EVAL_REPORT=FILE also
// writes each table to FILE.text and FILE.vectors.
func TestConversations(t *testing.T) {
	convs, err := eval.LoadConversations("conversations")
	if err != nil {
		t.Fatal(err)
	}
	db := neo4jtest.DB(t)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("eval"))

	// Every time is the fixture's own: turns are created when they were
	// said, and each question is asked at its conversation's Asked
	// instant (the ranking instant), so recency and the times questions
	// name ("last week", "in March") play as they would for memories
	// written as they happened, and the figures do not drift with the day
	// the eval runs.
	emb := evalEmbedder(t, db)
	scopes := make([]string, len(convs))
	turnOf := map[string]string{}   // record id -> turn id
	vecOf := map[string][]float64{} // turn id -> its embedding, with an embedder
	turns, questions := 0, 0
	for i, c := range convs {
		scopes[i] = neo4jtest.Scope(t)
		deleteScopeAtEnd(t, db, scopes[i])
		batch := make([]*membrane.Ingested, 0, len(c.Turns))
		for _, tr := range c.Turns {
			in := membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scopes[i]}
			in.Payload.Episodic = &membrane.EpisodicPayload{SessionID: tr.Session,
				Timeline: []membrane.TimelineEvent{{T: tr.Time, EventKind: tr.Speaker, Ref: tr.ID, Summary: tr.Text}}}
			created := tr.Time
			r, err := membrane.DefaultPolicy().BuildRecord(in, created)
			if err != nil {
				t.Fatalf("%s: %v", tr.ID, err)
			}
			turnOf[r.ID] = tr.ID
			batch = append(batch, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "eval", "conversations", created)})
		}
		embedBatch(t, emb, batch)
		for _, in := range batch {
			if in.Embedding != nil {
				vecOf[turnOf[in.Record.ID]] = in.Embedding
			}
		}
		if _, err := db.CreateRecords(ctx, nil, batch); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		turns, questions = turns+len(c.Turns), questions+len(c.Questions)
	}
	if err := db.AwaitSearchIndexes(ctx); err != nil {
		t.Fatal(err)
	}

	for _, cfg := range configurations(emb) {
		t.Run(cfg.name, func(t *testing.T) {
			if cfg.skip != "" {
				t.Skip(cfg.skip)
			}
			cmp := eval.NewComparison("retrieve", "bm25")
			// The naive hybrid: BM25 and the same vectors fused by
			// reciprocal rank, printed beside retrieve (not gated).
			hybrid := eval.NewComparison("retrieve", "bm25+vectors (RRF)")
			var misses, each strings.Builder
			fmt.Fprintln(&each, "conversation\tcategory\tretrieve recall@10\tbm25 recall@10\tretrieve RR\tbm25 RR\tquestion")
			fmt.Fprintln(&misses, "questions where retrieve's recall@10 is below bm25's:")
			// ask asks q of retrieve over scopes, ranked at asked (or as
			// of it, with asOf), and returns the turns ranked and the
			// query's vector.
			ask := func(c *eval.Conversation, q eval.ConvQuestion, scopes []string, asOf bool) ([]string, []float64) {
				limit := int64(retrieveLimit)
				rq, err := membrane.NewRetrieveQuery(&q.Q, []membrane.MemoryType{membrane.TypeEpisodic}, scopes, nil, &limit, nil, nil)
				if err != nil {
					t.Fatalf("%s: %q: %v", c.Name, q.Q, err)
				}
				rq.Now = c.Asked
				if asOf {
					asked := c.Asked
					rq.AsOf = &asked
				}
				if cfg.vectors {
					embedQuery(t, emb, &rq)
				}
				res, err := db.Retrieve(ctx, rq, membrane.DefaultSelectionThreshold)
				if err != nil {
					t.Fatalf("%s: %q: %v", c.Name, q.Q, err)
				}
				ranked := make([]string, len(res.Hits))
				for j, h := range res.Hits {
					id, ok := turnOf[h.ID]
					if !ok {
						t.Fatalf("%q: retrieve returned record %s, not one of the fixture's", q.Q, h.ID)
					}
					ranked[j] = id
				}
				return ranked, rq.Vector
			}
			// score asks q of retrieve and of the baselines over the turns
			// of base, adds the scores to cmp (and with vectors to
			// hybrid) and returns retrieve's and BM25's.
			score := func(c *eval.Conversation, q eval.ConvQuestion, scopes []string, asOf bool, base corpus,
				sessionOf map[string]string, cmp, hybrid *eval.Comparison) (eval.Scores, eval.Scores) {
				ranked, vector := ask(c, q, scopes, asOf)
				rel := q.Relevance()
				lexical := base.bm25.Search(q.Q, retrieveLimit)
				a, b := eval.Score(ranked, rel, sessionOf), eval.Score(lexical, rel, sessionOf)
				cmp.Add(q.Category, a, b)
				if cfg.vectors {
					fused := eval.RRF(retrieveLimit, lexical, eval.VectorSearch(vector, base.ids, base.vecs, retrieveLimit))
					hybrid.Add(q.Category, a, eval.Score(fused, rel, sessionOf))
				}
				return a, b
			}
			for i, c := range convs {
				base := newCorpus(c.Turns, vecOf)
				sessionOf := c.SessionOf()
				for _, q := range c.Questions {
					a, b := score(c, q, []string{scopes[i]}, false, base, sessionOf, cmp, hybrid)
					fmt.Fprintf(&each, "%s\t%s\t%.2f\t%.2f\t%.3f\t%.3f\t%q\n", c.Name, q.Category, a.Recall10, b.Recall10, a.MRR, b.MRR, q.Q)
					if a.Recall10 < b.Recall10 {
						fmt.Fprintf(&misses, "  %-13s %s: %q recall@10 %.2f < bm25 %.2f\n", q.Category, c.Name, q.Q, a.Recall10, b.Recall10)
					}
				}
			}

			// Pooled: every conversation in one memory, as an agent's
			// memory of many conversations is searched: a question
			// searches every scope as of its asking (asOf: what was
			// written by then, the other conversations' turns of that time
			// as distractors; later turns would be written in its future),
			// and BM25 the same turns. Session recall then means more than
			// within a conversation's 4 to 6 sessions.
			pooled := eval.NewComparison("retrieve", "bm25")
			pooledHybrid := eval.NewComparison("retrieve", "bm25+vectors (RRF)")
			allSessions := map[string]string{}
			for _, c := range convs {
				for _, tr := range c.Turns {
					allSessions[tr.ID] = c.Name + "/" + tr.Session
				}
			}
			for _, c := range convs {
				var written []eval.Turn
				for _, o := range convs {
					for _, tr := range o.Turns {
						if !tr.Time.After(c.Asked) {
							written = append(written, tr)
						}
					}
				}
				base := newCorpus(written, vecOf)
				for _, q := range c.Questions {
					score(c, q, scopes, true, base, allSessions, pooled, pooledHybrid)
				}
			}

			report := fmt.Sprintf("conversations: %d, turns: %d, questions: %d, limit %d, %s\n%s", len(convs), turns, questions, retrieveLimit, cfg.name, cmp.Table(eval.Categories))
			if cfg.vectors {
				report += hybrid.Table(eval.Categories)
			}
			report += "pooled: every conversation in one memory, each question as of its asking\n" + pooled.Table(eval.Categories)
			if cfg.vectors {
				report += pooledHybrid.Table(eval.Categories)
			}
			report += misses.String()
			t.Log("\n" + report)
			if path := os.Getenv("MEMBRANE_EVAL_REPORT"); path != "" {
				if err := os.WriteFile(path+"."+cfg.name, []byte(report), 0o644); err != nil {
					t.Error(err)
				}
				if err := os.WriteFile(path+"."+cfg.name+".tsv", []byte(each.String()), 0o644); err != nil {
					t.Error(err)
				}
			}

			a, b := cmp.Overall()
			for _, f := range eval.Gate(a, b, cfg.target || os.Getenv("MEMBRANE_EVAL_TARGET") != "", cfg.vectors) {
				t.Error("retrieve against bm25: " + f)
			}
			a, b = pooled.Overall()
			fails := eval.Gate(a, b, cfg.target || os.Getenv("MEMBRANE_EVAL_TARGET") != "", cfg.vectors)
			if cfg.vectors {
				fails = append(fails, eval.SessionTarget(a, b)...)
			}
			for _, f := range fails {
				t.Error("pooled, retrieve against bm25: " + f)
			}
		})
	}
}

// deleteScopeAtEnd deletes the scope's records when the test ends: the
// full-text index is shared by every scope of the test database and its
// BM25 statistics are index-wide, so records left behind would move the
// figures of every later eval (this one's and TestRetrievalQuality's).
func deleteScopeAtEnd(t *testing.T, db *neo4j.DB, scope string) {
	t.Cleanup(func() {
		if err := db.DeleteScope(context.Background(), scope); err != nil {
			t.Errorf("delete scope %s: %v", scope, err)
		}
	})
}

// corpus is what the baselines search: the ids of some turns, the stemmed
// BM25 over their texts and their vectors (nil without an embedder).
type corpus struct {
	ids  []string
	bm25 *eval.BM25
	vecs [][]float64
}

func newCorpus(turns []eval.Turn, vecOf map[string][]float64) corpus {
	ids, texts, vecs := make([]string, len(turns)), make([]string, len(turns)), make([][]float64, len(turns))
	for i, tr := range turns {
		ids[i], texts[i], vecs[i] = tr.ID, tr.Text, vecOf[tr.ID]
	}
	return corpus{ids: ids, bm25: eval.NewBM25(ids, texts), vecs: vecs}
}
