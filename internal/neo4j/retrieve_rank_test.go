package neo4j_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestCandidatesRankAsDomain holds the candidates statement's copy of the
// score to its definition, membrane.RankRelativeTo: over random episodes
// (session chains, text from a small vocabulary, salience, confidence and
// times spread over months) and queries with and without a time or an
// order (whose weights differ), the statement returns its rows in the
// order Rank gives them, with the same scores. The statement picks which records come back by its copy, so a
// difference would return the wrong records.
func TestCandidatesRankAsDomain(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	rng := rand.New(rand.NewPCG(7, 11))
	words := make([]string, 8)
	for i := range words {
		words[i] = uniqueWord("rank")
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ings []*membrane.Ingested
	for s := range 6 {
		session := fmt.Sprintf("s%d", s)
		start := now.AddDate(0, 0, -rng.IntN(120))
		for turn := range 8 {
			var text []string
			for range 1 + rng.IntN(5) {
				text = append(text, words[rng.IntN(len(words))])
			}
			at := start.Add(time.Duration(turn) * time.Minute)
			summary := strings.Join(text, " ")
			ing, err := membrane.DefaultPolicy().BuildEvent(membrane.IngestEvent{
				IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Timestamp: &at},
				EventKind:  "user_input", Ref: fmt.Sprintf("%s-%d", session, turn), Summary: &summary, SessionID: &session}, at)
			if err != nil {
				t.Fatal(err)
			}
			r := ing.Record
			r.Salience = 0.2 + 0.8*rng.Float64()
			r.Lifecycle.BaseSalience = r.Salience
			r.Confidence = 0.3 + 0.7*rng.Float64()
			ings = append(ings, ing)
		}
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, ings); err != nil {
		t.Fatal(err)
	}
	// Entities no query names, each mentioned by some episodes: they are
	// reached from the seeds that mention them, and ranked by their entity
	// signal (membrane.EntityFloor) rather than by a match of their own.
	relate := membrane.NewServices(membrane.Stores{Revisions: db}, membrane.ServiceOptions{Policy: membrane.DefaultPolicy()}).Relate
	for e := range 3 {
		name := uniqueWord("entity")
		r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEntity, Scope: &scope,
			Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{CanonicalName: name, PrimaryType: "Concept"}}}, now.AddDate(0, 0, -e))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "entity", now)}}); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			from := ings[rng.IntN(len(ings))].Record.ID
			if _, err := relate.AddRelation(ctx, from, membrane.PredMentions, r.ID, nil, membrane.RevisionArgs{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		words[0], words[1] + " " + words[2], words[3] + " last month", words[4] + " " + words[5] + " two weeks ago",
		words[6] + " in " + now.AddDate(0, -2, 0).Month().String(), words[7] + " " + words[0] + " yesterday",
		// Asking for the latest weighs recency (membrane.LatestWeights);
		// asking for the first does not.
		"the latest " + words[1], words[2] + " " + words[3] + " originally",
	}
	reached := false
	for _, text := range queries {
		for _, limit := range []int64{3, 10} {
			q, err := membrane.NewRetrieveQuery(&text, nil, []string{scope}, nil, &limit, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			q = q.WithTimeHint(now)
			cands, best, top, err := db.CandidatesOf(ctx, q, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(cands) == 0 {
				t.Fatalf("%q: no candidates", text)
			}
			ranked := membrane.RankRelativeTo(q, cands, best, top, now)
			for _, h := range ranked {
				if h.Type == membrane.TypeEntity {
					reached = true
				}
			}
			for i, h := range ranked {
				if h.ID != cands[i].ID {
					t.Fatalf("%q limit %d: place %d is %s in the statement, %s in Rank", text, limit, i, cands[i].ID, h.ID)
				}
			}
		}
	}
	if !reached {
		t.Fatal("no query reached an entity: the entity signal went untested")
	}
}
