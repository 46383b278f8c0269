package neo4j_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

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
	}{{"read whole", membrane.MaxEntitiesReadWhole}, {"looked up by name", 1}} {
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
