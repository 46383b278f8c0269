package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestResealCommandReportsSkipped: `membrane reseal` prints how many
// records and audit entries did not open under the key it retires (they
// stay sealed with it), beside what it resealed, and succeeds.
func TestResealCommandReportsSkipped(t *testing.T) {
	neo4jtest.DB(t) // the schema, and a clear failure without NEO4J_URI
	suffix := membrane.NewID()
	oldKey := neo4jtest.SealKey("cli-old-"+suffix, 5)
	newKey := neo4jtest.SealKey("cli-new-"+suffix, 6)
	scope := neo4jtest.Scope(t)
	sealer, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{oldKey}, oldKey.ID)
	if err != nil {
		t.Fatal(err)
	}
	db, err := neo4j.Open(t.Context(), neo4j.Config{URI: os.Getenv("NEO4J_URI"), Database: "neo4j", Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	// Sealed with keys no other test has: removed, so that unscoped reads
	// by other tests never meet them.
	neo4jtest.DeleteAtEnd(t, db, scope)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	hi := membrane.SensitivityHigh
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &hi}, Subject: "vault", Predicate: "holds", Object: "the secret"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
		t.Fatal(err)
	}
	// The record's payload no longer opens under the old key.
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	if _, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (m:Memory {id: $id}) SET m.payload = $v`,
		map[string]any{"id": ing.Record.ID, "v": "mbx1:" + oldKey.ID + ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, driver.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}

	keys := []string{}
	for _, k := range []membrane.SealKey{newKey, oldKey} {
		keys = append(keys, k.ID+":"+base64.StdEncoding.EncodeToString(k.Key))
	}
	t.Setenv("MEMBRANE_ENCRYPTION_KEY", strings.Join(keys, ","))
	var stdout, stderr bytes.Buffer
	if code := app.CLI([]string{"reseal", "-key", oldKey.ID}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("reseal exited %d: %s %s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		`resealed 0 records and 1 audit entries from key "` + oldKey.ID + `"`,
		`skipped 1 records and 0 audit entries that do not open under key "` + oldKey.ID + `"`,
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("reseal printed %q, want %q in it", stdout.String(), want)
		}
	}
}
