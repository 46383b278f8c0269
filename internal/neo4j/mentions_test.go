package neo4j_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestMentionsLinkedAtWrite: a record written MENTIONS the entities of its
// own scope that its text names by a name or an alias, stored before it or
// written in the same batch, when the writer sees them in full; not those
// of another scope, nor one above the writer's ceiling, nor a retracted
// one, nor one less sensitive than the record (a reader seeing the record
// redacted would learn a name in its text); an entity is linked to nothing
// by its own text.
func TestMentionsLinkedAtWrite(t *testing.T) {
	db := neo4jtest.DB(t)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	neo4jtest.DeleteAtEnd(t, db, scope)
	neo4jtest.DeleteAtEnd(t, db, other)
	entity := func(scope, name string, aliases ...string) membrane.RecordInput {
		e := &membrane.EntityPayload{CanonicalName: name, PrimaryType: "Service"}
		for _, a := range aliases {
			e.Aliases = append(e.Aliases, membrane.EntityAlias{Value: a})
		}
		return membrane.RecordInput{Type: membrane.TypeEntity, Scope: &scope, Payload: membrane.PayloadInput{Entity: e}}
	}
	note := func(text string) membrane.RecordInput {
		return membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope, Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
			Timeline: []membrane.TimelineEvent{{T: t0, EventKind: "note", Summary: text}}}}}
	}
	stored := neo4jtest.Create(t, db, t0, entity(scope, "PostgreSQL", "postgres"), entity(other, "Stripe"),
		sensitive(entity(scope, "Kafka"), membrane.SensitivityMedium), entity(scope, "Redis"))
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
		Principal: membrane.Principal{Actor: "w", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}},
		Ceiling:   membrane.SensitivityLow.Level(), Scopes: []string{scope}})
	var batch []*membrane.Ingested
	for _, in := range []membrane.RecordInput{
		note("Invoices moved to Postgres; Stripe, Kafka and Redis stay"),
		entity(scope, "billing-service", "billing"),
		note("the billing-service is down"),
		note("nothing named here"),
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
	recs = append(recs, neo4jtest.Create(t, db, t0, sensitive(note("postgres again, in confidence"), membrane.SensitivityMedium))...)
	for i, want := range [][]string{{pg}, nil, {recs[1].ID}, nil, nil} {
		var got []string
		for _, row := range raw(t, "MATCH (:Memory {id: $id})-[:MENTIONS]->(e) RETURN e.id", map[string]any{"id": recs[i].ID}) {
			got = append(got, row.Values[0].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("record %d mentions %v, want %v", i, got, want)
		}
	}
}
