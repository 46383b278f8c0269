package app_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestMigrateCommand: `membrane migrate` brings the configured database to
// this binary's schema version, says so, and run again does the same and
// succeeds (it is idempotent). The database is the shared test database,
// which the test packages' starts already keep at this version: how an
// older one is migrated and refused is internal/neo4j's TestMigrateReindex
// and TestStart, over a schema node of their own.
func TestMigrateCommand(t *testing.T) {
	neo4jtest.DB(t) // a clear failure without NEO4J_URI
	for run := range 2 {
		var stdout, stderr bytes.Buffer
		if code := app.CLI([]string{"migrate"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("run %d: migrate exited %d: %s %s", run, code, stdout.String(), stderr.String())
		}
		want := fmt.Sprintf("schema version %d (was %d): re-indexed ", neo4j.SchemaVersion, neo4j.SchemaVersion)
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run %d: migrate printed %q, want %q in it", run, stdout.String(), want)
		}
	}
}
