// Package neo4jtest connects tests to the real Neo4j that the project's test
// command starts (scripts/test.sh exports NEO4J_URI). Tests share the one
// database and isolate their data by giving every record a scope of their
// own (see Scope), so packages and tests can run in parallel.
package neo4jtest

import (
	"bytes"
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
	return open(tb, []membrane.SealKey{TestSealKey}, TestSealKey.ID, observers)
}

// OpenSealing is Open with a sealer holding keys (sealing new records with
// the key of id active) in place of the test key: a server that lost a
// key, or rotated to a new one.
func OpenSealing(tb testing.TB, keys []membrane.SealKey, active string) *neo4j.DB {
	tb.Helper()
	return open(tb, keys, active, nil)
}

func open(tb testing.TB, keys []membrane.SealKey, active string, observers []neo4j.Observer) *neo4j.DB {
	tb.Helper()
	DB(tb) // the schema is applied
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sealer, err := membrane.NewSealer(membrane.SensitivityHigh, keys, active)
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

// SealKey returns an encryption key of id whose 32 bytes are all b. Tests
// that seal with keys of their own give them ids no other test uses (a
// fresh membrane.NewID in them), so that their records never meet the
// unscoped reads of other tests.
func SealKey(id string, b byte) membrane.SealKey {
	return membrane.SealKey{ID: id, Key: bytes.Repeat([]byte{b}, 32)}
}

// DeleteAtEnd deletes scope's records through db when the test ends: the
// records a test seals with keys of its own must not stay for other tests
// to meet (they could not open them), nor the vectors a test writes: the
// vector index is the whole database's and takes no filter, so vectors
// left by earlier runs (of the same test, or of another model's) crowd a
// later run's own out of a query's nearest.
func DeleteAtEnd(tb testing.TB, db *neo4j.DB, scope string) {
	tb.Cleanup(func() {
		if err := db.DeleteScope(context.Background(), scope); err != nil {
			tb.Error(err)
		}
	})
}

// SealedScope opens a store sealing with keys (see OpenSealing) and
// returns it with a scope of the test's own whose records it deletes when
// the test ends (see DeleteAtEnd).
func SealedScope(tb testing.TB, keys []membrane.SealKey, active string) (string, *neo4j.DB) {
	tb.Helper()
	db := OpenSealing(tb, keys, active)
	scope := Scope(tb)
	DeleteAtEnd(tb, db, scope)
	return scope, db
}

// Scope returns a scope unique to this test, to stamp on everything it
// writes and to filter everything it reads.
func Scope(tb testing.TB) string {
	tb.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(tb.Name())
	return "test:" + name + ":" + membrane.NewID()
}

// Create writes records built from ins at the time at (with the default
// policy, each with its creation audit entry) through db as the system, and
// returns them in the order of ins.
func Create(tb testing.TB, db *neo4j.DB, at time.Time, ins ...membrane.RecordInput) []*membrane.Record {
	tb.Helper()
	p := membrane.DefaultPolicy()
	batch := make([]*membrane.Ingested, len(ins))
	for i, in := range ins {
		r, err := p.BuildRecord(in, at)
		if err != nil {
			tb.Fatal(err)
		}
		batch[i] = &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)}
	}
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("test"))
	recs, err := db.CreateRecords(ctx, nil, batch)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
