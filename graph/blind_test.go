package graph_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestBlindWritePaths: every way of writing a sealed (high) record gives it
// blind terms in the same transaction, so that it is found by a stemmed
// query at once by a principal cleared for it, and never by a medium one.
func TestBlindWritePaths(t *testing.T) {
	medium := reader("medium", membrane.SensitivityMedium, membrane.AllScopes)
	c := newClient(t, medium)
	const text = "the ledger reconciles quarterly invoices"
	const query = "invoice reconciled"
	tests := []struct {
		name  string
		write func(scope string) []string // ids that hold text
	}{
		{"createRecord", func(scope string) []string {
			var out struct{ CreateRecord struct{ ID string } }
			c.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"type": "SEMANTIC", "scope": scope, "sensitivity": "HIGH", "payload": map[string]any{"semantic": map[string]any{
					"subject": "ledger", "predicate": "does", "object": text,
					"evidence": []any{map[string]any{"sourceType": "test", "sourceId": "t"}}}}}}, &out)
			return []string{out.CreateRecord.ID}
		}},
		{"ingestObservation", func(scope string) []string {
			var out struct{ IngestObservation struct{ ID string } }
			c.Do(`mutation($in: IngestObservationInput!) { ingestObservation(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"source": "agent", "subject": "ledger", "predicate": "does", "object": text, "scope": scope, "sensitivity": "HIGH"}}, &out)
			return []string{out.IngestObservation.ID}
		}},
		{"ingestEvent", func(scope string) []string {
			var out struct{ IngestEvent struct{ ID string } }
			c.Do(`mutation($in: IngestEventInput!) { ingestEvent(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"source": "agent", "eventKind": "note", "ref": "turn-1", "summary": text, "scope": scope, "sensitivity": "HYPER"}}, &out)
			return []string{out.IngestEvent.ID}
		}},
		{"ingestWorkingState", func(scope string) []string {
			var out struct{ IngestWorkingState struct{ ID string } }
			c.Do(`mutation($in: IngestWorkingStateInput!) { ingestWorkingState(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"source": "agent", "threadId": "t-1", "state": "EXECUTING", "contextSummary": text, "scope": scope, "sensitivity": "HIGH"}}, &out)
			return []string{out.IngestWorkingState.ID}
		}},
		{"ingestBatch", func(scope string) []string {
			var out struct{ IngestBatch []struct{ ID string } }
			in := func(subject string) map[string]any {
				return map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": "HIGH", "payload": map[string]any{"semantic": map[string]any{
					"subject": subject, "predicate": "does", "object": text,
					"evidence": []any{map[string]any{"sourceType": "test", "sourceId": "t"}}}}}
			}
			c.Do(`mutation($ins: [RecordInput!]!) { ingestBatch(inputs: $ins) { id } }`, map[string]any{"ins": []any{in("ledger"), in("books")}}, &out)
			return []string{out.IngestBatch[0].ID, out.IngestBatch[1].ID}
		}},
		{"supersede", func(scope string) []string {
			var old struct{ CreateRecord struct{ ID string } }
			c.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": map[string]any{
				"type": "SEMANTIC", "scope": scope, "sensitivity": "HIGH", "payload": gqltest.Fact("ledger")}}, &old)
			var out struct{ Supersede struct{ ID string } }
			c.Do(supersedeQ, map[string]any{"old": old.CreateRecord.ID, "in": map[string]any{
				"type": "SEMANTIC", "scope": scope, "sensitivity": "HIGH", "payload": map[string]any{"semantic": map[string]any{
					"subject": "ledger", "predicate": "does", "object": text,
					"evidence": []any{map[string]any{"sourceType": "test", "sourceId": "t"}}}}}}, &out)
			return []string{out.Supersede.ID}
		}},
		{"captureMemory", func(scope string) []string {
			out := c.capture(map[string]any{"source": "agent", "summary": text, "scope": scope, "sensitivity": "HIGH"})
			return []string{out.CaptureMemory.Primary.ID}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			ids := tt.write(scope)
			if err := c.DB.AwaitSearchIndexes(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if n := rawNodes(t, id)[0]; n["blindTerms"] == nil || n["blindKeyId"] != neo4jtest.TestSealKey.ID {
					t.Fatalf("record %s has no blind terms: %v", id, n)
				}
			}
			in := map[string]any{"query": query, "scopes": []any{scope}, "limit": 20}
			got := hitIDs(c.retrieve(in).Retrieve.Hits)
			for _, id := range ids {
				if !slices.Contains(got, id) {
					t.Errorf("the admin does not find %s: %v", id, got)
				}
			}
			if got := c.as(medium.Actor).retrieve(in).Retrieve.Hits; len(got) != 0 {
				t.Errorf("a medium reader finds %v", hitIDs(got))
			}
		})
	}
}
