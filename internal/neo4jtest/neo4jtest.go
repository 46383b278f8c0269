// Package neo4jtest connects tests to the real Neo4j that the project's test
// command starts (scripts/test.sh exports NEO4J_URI). Tests share the one
// database and isolate their data by giving every record a scope of their
// own (see Scope), so packages and tests can run in parallel.
package neo4jtest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// TestSealKey encrypts sensitive records in tests (high and above).
var TestSealKey = membrane.SealKey{ID: "test", Key: []byte("membrane-test-key-32-bytes-long!")}

var (
	once    sync.Once
	shared  *neo4j.DB
	openErr error
)

// DB returns a store connected to the test Neo4j with the schema applied.
// It fails the test when NEO4J_URI is not set: storage behaviour is only
// ever tested against a real database.
func DB(tb testing.TB) *neo4j.DB {
	tb.Helper()
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		tb.Fatal("NEO4J_URI is not set: run the suite with scripts/test.sh, which starts a local Neo4j")
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var sealer *membrane.Sealer
		sealer, openErr = membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{TestSealKey}, TestSealKey.ID)
		if openErr != nil {
			return
		}
		shared, openErr = neo4j.Open(ctx, neo4j.Config{
			URI: uri, User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"),
			Database: envOr("NEO4J_DATABASE", "neo4j"), MaxPoolSize: 50, TxTimeout: time.Minute, Sealer: sealer,
		})
		if openErr == nil {
			openErr = shared.Start(ctx, true)
		}
	})
	if openErr != nil {
		tb.Fatalf("open test neo4j: %v", openErr)
	}
	return shared
}

// Open returns a store of its own (a driver of its own, closed when the
// test ends) over the test database, reporting to observers: the shared
// store of DB has none, and tests that observe transactions must not see
// those of the tests running beside them.
func Open(tb testing.TB, observers ...neo4j.Observer) *neo4j.DB {
	tb.Helper()
	DB(tb) // the schema is applied
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sealer, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{TestSealKey}, TestSealKey.ID)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := neo4j.Open(ctx, neo4j.Config{
		URI: os.Getenv("NEO4J_URI"), User: os.Getenv("NEO4J_USER"), Password: os.Getenv("NEO4J_PASSWORD"),
		Database: envOr("NEO4J_DATABASE", "neo4j"), MaxPoolSize: 10, TxTimeout: time.Minute, Sealer: sealer,
		Observers: observers,
	})
	if err != nil {
		tb.Fatalf("open test neo4j: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

// Scope returns a scope unique to this test, to stamp on everything it
// writes and to filter everything it reads.
func Scope(tb testing.TB) string {
	tb.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(tb.Name())
	return "test:" + name + ":" + membrane.NewID()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
