package neo4j_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestMentionsLinkedAtWrite: a record written MENTIONS the entities of its
// own scope that its text names by a name or an alias, stored before it or
// written in the same batch, when the writer sees them in full; not those
// of another scope, nor one above the writer's ceiling, nor a retracted
// one, nor one less sensitive than the record (a reader seeing the record
// redacted would learn a name in its text); an entity is linked to nothing
// by its own text. Both ways of finding the scope's entities are run: all
// of them read (a scope of few entities) and looked up by the names the
// text may hold (one of more).
func TestMentionsLinkedAtWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		few  int // the most entities of a scope read whole
	}{{"read whole", neo4j.MaxEntitiesReadWhole}, {"looked up by name", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			db := neo4jtest.DB(t)
			neo4j.SetScopeEntities(db, tc.few)
			mentionsLinkedAtWrite(t, db)
		})
	}
}

func mentionsLinkedAtWrite(t *testing.T, db *neo4j.DB) {
	scope, other, fresh, crowded := neo4jtest.Scope(t), neo4jtest.Scope(t), neo4jtest.Scope(t), neo4jtest.Scope(t)
	for _, s := range []string{scope, other, fresh, crowded} {
		neo4jtest.DeleteAtEnd(t, db, s)
	}
	entity := func(scope, name string, aliases ...string) membrane.RecordInput {
		e := &membrane.EntityPayload{CanonicalName: name, PrimaryType: "Service"}
		for _, a := range aliases {
			e.Aliases = append(e.Aliases, membrane.EntityAlias{Value: a})
		}
		return membrane.RecordInput{Type: membrane.TypeEntity, Scope: &scope, Payload: membrane.PayloadInput{Entity: e}}
	}
	noteIn := func(scope, text string) membrane.RecordInput {
		return membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope, Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
			Timeline: []membrane.TimelineEvent{{T: t0, EventKind: "note", Summary: text}}}}}
	}
	note := func(text string) membrane.RecordInput { return noteIn(scope, text) }
	// crowded holds more entities than a record links to by its text.
	inputs := []membrane.RecordInput{entity(scope, "PostgreSQL", "postgres"), entity(other, "Stripe"),
		sensitive(entity(scope, "Kafka"), membrane.SensitivityMedium), entity(scope, "Redis")}
	var everyName []string
	for i := range 30 {
		name := fmt.Sprintf("svc-%02d", i)
		inputs = append(inputs, entity(crowded, name))
		everyName = append(everyName, name)
	}
	stored := neo4jtest.Create(t, db, t0, inputs...)
	pg, redis := stored[0].ID, stored[3].ID
	if _, err := db.Revise(sysCtx(), nil, []string{redis}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Retract(locked[redis], membrane.RevisionMeta{Actor: "test"}, t0)
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	writer := membrane.NewContextWithTrust(t.Context(), membrane.Trust{
		Principal: membrane.Principal{Actor: "w", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope, fresh}},
		Ceiling:   membrane.SensitivityLow.Level(), Scopes: []string{scope, fresh}})
	var batch []*membrane.Ingested
	for _, in := range []membrane.RecordInput{
		note("Invoices moved to Postgres; Stripe, Kafka and Redis stay"),
		entity(scope, "billing-service", "billing"),
		note("the billing-service is down"),
		note("nothing named here"),
		// A scope whose only entity is in the batch.
		entity(fresh, "Grafana"),
		noteIn(fresh, "Grafana dashboards are red"),
	} {
		r, err := membrane.DefaultPolicy().BuildRecord(in, t0)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "w", "", t0)})
	}
	recs, err := db.CreateRecords(writer, nil, batch)
	if err != nil {
		t.Fatal(err)
	}
	// Written by the system, which sees every entity in full.
	recs = append(recs, neo4jtest.Create(t, db, t0, sensitive(note("postgres again, in confidence"), membrane.SensitivityMedium),
		noteIn(crowded, "all of "+strings.Join(everyName, ", ")))...)
	mentions := func(id string) []string {
		var got []string
		for _, row := range raw(t, "MATCH (:Memory {id: $id})-[:MENTIONS]->(e) RETURN e.id ORDER BY e.id", map[string]any{"id": id}) {
			got = append(got, row.Values[0].(string))
		}
		return got
	}
	for i, want := range [][]string{{pg}, nil, {recs[1].ID}, nil, nil, {recs[4].ID}, nil} {
		if got := mentions(recs[i].ID); !slices.Equal(got, want) {
			t.Errorf("record %d mentions %v, want %v", i, got, want)
		}
	}
	if got := mentions(recs[7].ID); len(got) != 25 {
		t.Errorf("a text naming 30 entities mentions %d, want 25", len(got))
	}
}

func TestEntitiesReadWhole(t *testing.T) {
	for _, tt := range []struct{ names, want int }{
		{0, 16},  // a few entities are read whole, however short the text
		{24, 16}, // two thirds of 24 is under the floor
		{60, 40}, // one record of fifteen words
		{1200, 800},
		{1 << 20, neo4j.MaxEntitiesReadWhole},
	} {
		if got := neo4j.EntitiesReadWhole(tt.names); got != tt.want {
			t.Errorf("EntitiesReadWhole(%d) = %d, want %d", tt.names, got, tt.want)
		}
	}
}

// BenchmarkMentionLinking writes one record, and batches of 256, of about
// fifteen words each, by the store (DB.CreateRecords), in scopes of 0, 100,
// 1,000 and 3,000 entities named by two words each, some of which every
// text names, and reports ms per write: what linking the mentions found in
// text costs as a scope's entities grow (entitiesReadWhole picks
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
