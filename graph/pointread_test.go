package graph_test

import (
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestPointReadIsOneTransaction: through the GraphQL handler, record(id)
// with the bench's selection (cmd/bench's point read) costs one read
// transaction, of one statement (internal/neo4j's
// TestProfileSmallOperations counts the statements; docs/BENCHMARKS.md,
// "Revisions"): no
// field of the selection reads anything more.
func TestPointReadIsOneTransaction(t *testing.T) {
	c := newClient(t)
	id := c.Create(neo4jtest.Scope(t), "SEMANTIC", gqltest.Fact("read"), nil)
	var got struct {
		Record struct {
			ID, Type   string
			Version    int
			Confidence float64
			Salience   float64
		}
	}
	before := c.DB.TxCount()
	c.Do(`query($id: ID!) { record(id: $id) { id type version confidence salience } }`, map[string]any{"id": id}, &got)
	if n := c.DB.TxCount() - before; n != 1 {
		t.Fatalf("transactions = %d for one point read, want 1", n)
	}
	if got.Record.ID != id || got.Record.Type != "SEMANTIC" || got.Record.Version != 1 {
		t.Fatalf("record = %+v", got.Record)
	}
}
