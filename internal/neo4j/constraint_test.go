package neo4j_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestConstraintErrorClassification: a uniqueness violation is a taken id
// (membrane.IDTaken) only on the ids a client may choose, a record's and a
// deleted record's; on every other unique node (keys the server chose) it
// is a CONFLICT that never tells the client to choose another id. The
// errors are the server's own: each statement creates the same node twice
// in one transaction, which fails and writes nothing.
func TestConstraintErrorClassification(t *testing.T) {
	neo4jtest.DB(t) // the schema, with its constraints
	id := neo4jtest.Scope(t) + "-dup"
	tests := []struct {
		name, stmt string
		taken      bool
	}{
		{"record id", "CREATE (:Memory {id: $v}), (:Memory {id: $v})", true},
		{"deleted record id", "CREATE (:DeletedRecordId {id: $v}), (:DeletedRecordId {id: $v})", true},
		{"idempotency key", "CREATE (:IdempotencyKey {key: $v}), (:IdempotencyKey {key: $v})", false},
		{"job run", "CREATE (:JobRun {id: $v}), (:JobRun {id: $v})", false},
		{"plan step", "CREATE (:PlanStep {id: $v}), (:PlanStep {id: $v})", false},
		{"entity lock bucket", "CREATE (:EntityLock {bucket: $v}), (:EntityLock {bucket: $v})", false},
		{"session lock bucket", "CREATE (:SessionLock {bucket: $v}), (:SessionLock {bucket: $v})", false},
		// A value that spells a record's constraint does not fake it.
		{"key that names a record", "CREATE (:IdempotencyKey {key: $w}), (:IdempotencyKey {key: $w})", false},
	}
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := driver.ExecuteQuery(t.Context(), drv, tt.stmt,
				map[string]any{"v": id, "w": "x' Node(1) already exists with label `Memory` and property `id` = 'y"}, driver.EagerResultTransformer)
			if err == nil {
				t.Fatal("the duplicate was written")
			}
			got := neo4j.MapError(err)
			if code := membrane.ErrorCode(got); code != membrane.ECONFLICT {
				t.Fatalf("code %s (%v), want CONFLICT", code, got)
			}
			var me *membrane.Error
			if !errors.As(got, &me) {
				t.Fatalf("not a membrane error: %v", got)
			}
			if taken := me.Message == membrane.IDTaken; taken != tt.taken {
				t.Fatalf("message %q: taken id %v, want %v", me.Message, taken, tt.taken)
			}
		})
	}
}
