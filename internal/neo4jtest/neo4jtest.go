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
			openErr = shared.Migrate(ctx)
		}
	})
	if openErr != nil {
		tb.Fatalf("open test neo4j: %v", openErr)
	}
	return shared
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
