package neo4j_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// sealedFact stores a fact of sensitivity sens in scope through db and
// returns its id.
func sealedFact(t *testing.T, db *neo4j.DB, scope string, sens membrane.Sensitivity, subject, predicate, object string) string {
	t.Helper()
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &sens},
		Subject:    subject, Predicate: predicate, Object: object}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
		t.Fatal(err)
	}
	return ing.Record.ID
}

// trustAt is a reader with ceiling sens over scopes.
func trustAt(sens membrane.Sensitivity, scopes ...string) membrane.Trust {
	return membrane.Trust{Principal: membrane.Principal{Actor: "reader-" + string(sens), Role: membrane.RoleReader, MaxSensitivity: sens, Scopes: scopes},
		Ceiling: sens.Level(), Scopes: scopes}
}

// retrieveAs runs retrieve(query) for trust at the fixed instant now (so
// that two runs score alike) after the eventually consistent indexes caught
// up, and returns the hits' ids and scores.
func retrieveAs(t *testing.T, db *neo4j.DB, trust membrane.Trust, query string, now time.Time) ([]string, []float64) {
	t.Helper()
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Only the test's scopes: other tests' unscoped records stay out.
	qp := &query
	if query == "" {
		qp = nil // browse: the newest records
	}
	q, err := membrane.NewRetrieveQuery(qp, nil, trust.Scopes, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	q.Now = now
	r, err := db.Retrieve(membrane.NewContextWithTrust(t.Context(), trust), q, 0.7)
	if err != nil {
		t.Fatalf("retrieve %q: %v", query, err)
	}
	var ids []string
	var scores []float64
	for _, h := range r.Hits {
		ids = append(ids, h.ID)
		scores = append(scores, h.Score)
	}
	return ids, scores
}

// nodeProps reads a record's node properties directly, as someone holding
// the database would.
func nodeProps(t *testing.T, id string) map[string]any {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	res, err := driver.ExecuteQuery(t.Context(), drv, "MATCH (m:Memory {id: $id}) RETURN properties(m)",
		map[string]any{"id": id}, driver.EagerResultTransformer)
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read node %s: %v", id, err)
	}
	p, _ := res.Records[0].Values[0].(map[string]any)
	return p
}

// TestBlindRetrieveGated: a sealed (high) record is found by its stemmed
// words by principals whose ceiling and scopes reach it, through the blind
// index; a medium principal never finds it, and its own hits and scores are
// the same as before the sealed record existed (nothing leaks through the
// normalisation of scores).
func TestBlindRetrieveGated(t *testing.T) {
	db := neo4jtest.DB(t)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	now := time.Now().Add(time.Minute).UTC()
	plain := sealedFact(t, db, scope, membrane.SensitivityMedium, "vault", "replicates", "backup")
	query := "vault"
	mediumBefore, mediumScores := retrieveAs(t, db, trustAt(membrane.SensitivityMedium, scope), query, now)
	if !slices.Equal(mediumBefore, []string{plain}) {
		t.Fatalf("medium before: %v, want the plain record", mediumBefore)
	}
	sealed := sealedFact(t, db, scope, membrane.SensitivityHigh, "vault", "stores", "database passwords")
	// Stemmed: "password" matches "passwords" (and "databases" "database").
	tests := []struct {
		name  string
		trust membrane.Trust
		want  []string
	}{
		{"high in scope", trustAt(membrane.SensitivityHigh, scope), []string{plain, sealed}},
		{"hyper in scope", trustAt(membrane.SensitivityHyper, scope), []string{plain, sealed}},
		{"high, other scope", trustAt(membrane.SensitivityHigh, other), nil},
		{"medium in scope", trustAt(membrane.SensitivityMedium, scope), []string{plain}},
		{"low in scope", trustAt(membrane.SensitivityLow, scope), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := retrieveAs(t, db, tt.trust, query, now)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("hits %v, want %v (sealed %s, plain %s)", got, want, sealed, plain)
			}
		})
	}
	t.Run("medium scores unchanged", func(t *testing.T) {
		ids, scores := retrieveAs(t, db, trustAt(membrane.SensitivityMedium, scope), query, now)
		if !slices.Equal(ids, mediumBefore) || !slices.Equal(scores, mediumScores) {
			t.Fatalf("medium after the sealed record: %v %v, before %v %v", ids, scores, mediumBefore, mediumScores)
		}
	})
	t.Run("only sealed words", func(t *testing.T) {
		got, _ := retrieveAs(t, db, trustAt(membrane.SensitivityHigh, scope), "password databases", now)
		if !slices.Equal(got, []string{sealed}) {
			t.Fatalf("hits %v, want the sealed record %s", got, sealed)
		}
	})
}

// TestBlindNoPlaintext: no property of a sealed record holds a word of its
// text, or its analysed terms; its blind terms are one token per term
// occurrence, under the active key. A record below the threshold has none.
func TestBlindNoPlaintext(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	words := []string{"vault", "stores", "production", "passwords", "rotated", "weekly"}
	sealed := sealedFact(t, db, scope, membrane.SensitivityHyper, "vault", "stores", "production passwords rotated weekly")
	plain := sealedFact(t, db, scope, membrane.SensitivityMedium, "vault", "stores", "production passwords rotated weekly")
	p := nodeProps(t, sealed)
	if p["blindKeyId"] != neo4jtest.TestSealKey.ID {
		t.Fatalf("blindKeyId = %v", p["blindKeyId"])
	}
	toks := strings.Fields(fmt.Sprint(p["blindTerms"]))
	if len(toks) == 0 || !slices.IsSorted(toks) {
		t.Fatalf("blindTerms = %v", p["blindTerms"])
	}
	var forbidden []string
	for _, w := range words {
		forbidden = append(forbidden, w)
		for _, term := range membrane.AnalyzeText(w) {
			if len(term) >= 4 {
				forbidden = append(forbidden, term)
			}
		}
	}
	// A word (or stem) counts where it starts a word: inside ciphertext's
	// base64 a four-letter stem turns up by chance about once in a few
	// hundred runs, at the start of a word only after a '+' or '/' (32
	// times less often); a leak of the text starts a word.
	for k, v := range p {
		s := fmt.Sprint(v)
		for _, w := range forbidden {
			if regexp.MustCompile(`(?i)(^|[^a-z0-9])` + regexp.QuoteMeta(w)).MatchString(s) {
				t.Errorf("property %s of the sealed record holds %q: %s", k, w, s)
			}
		}
	}
	if pp := nodeProps(t, plain); pp["blindTerms"] != nil || pp["blindKeyId"] != nil {
		t.Fatalf("a medium record has blind terms: %v %v", pp["blindTerms"], pp["blindKeyId"])
	}
}

// TestBlindReseal: during a rotation the blind terms under the old key
// still match; reseal recomputes them under the active key, and the record
// is then found with the new key alone.
func TestBlindReseal(t *testing.T) {
	suffix := membrane.NewID()
	oldKey := neo4jtest.SealKey("old-"+suffix, 11)
	newKey := neo4jtest.SealKey("new-"+suffix, 12)
	scope, before := neo4jtest.SealedScope(t, []membrane.SealKey{oldKey}, oldKey.ID)
	id := sealedFact(t, before, scope, membrane.SensitivityHigh, "ledger", "reconciles", "quarterly invoices")
	now := time.Now().Add(time.Minute).UTC()
	hi := trustAt(membrane.SensitivityHigh, scope)
	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	if got, _ := retrieveAs(t, rotated, hi, "invoice", now); !slices.Equal(got, []string{id}) {
		t.Fatalf("during rotation: %v", got)
	}
	if _, err := rotated.Reseal(membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test")), oldKey.ID); err != nil {
		t.Fatal(err)
	}
	if k := nodeProps(t, id)["blindKeyId"]; k != newKey.ID {
		t.Fatalf("blindKeyId after reseal = %v", k)
	}
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	if got, _ := retrieveAs(t, newOnly, hi, "invoices reconciled", now); !slices.Equal(got, []string{id}) {
		t.Fatalf("with the new key only: %v", got)
	}
}

// TestBlindUnknownKey: a record sealed under a key this server lacks does
// not break retrieve (its blind terms never match the server's tokens, and
// browsing, which meets it among the newest, leaves it out), and the
// records this server can open are still found.
func TestBlindUnknownKey(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("lost-"+suffix, 13)
	kept := neo4jtest.SealKey("kept-"+suffix, 14)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	sealedFact(t, withLost, scope, membrane.SensitivityHigh, "harbour", "shelters", "fishing boats")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	found := sealedFact(t, server, scope, membrane.SensitivityHigh, "harbour", "charges", "mooring fees")
	now := time.Now().Add(time.Minute).UTC()
	tests := []struct {
		query string
		want  []string
	}{
		{"harbour", []string{found}},
		{"fishing boats", nil},
		// Browsing (no query) meets the lost record among the newest: it
		// is left out, the others are not.
		{"", []string{found}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, _ := retrieveAs(t, server, trustAt(membrane.SensitivityHyper, scope), tt.query, now)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("hits %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBlindReindex: sealed records whose blind terms are missing or an
// earlier analysis computed get the current ones from Migrate's re-index;
// a record sealed under a key the server lacks is skipped and counted. A
// start leaves them as they are: it scans no data.
func TestBlindReindex(t *testing.T) {
	neo4jtest.DB(t)
	suffix := membrane.NewID()
	key := neo4jtest.SealKey("mig-"+suffix, 15)
	lost := neo4jtest.SealKey("miglost-"+suffix, 16)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{key}, key.ID)
	id := sealedFact(t, server, scope, membrane.SensitivityHigh, "orchard", "grows", "heritage apples")
	lostID := sealedFact(t, withLost, scope, membrane.SensitivityHigh, "orchard", "sells", "cider")
	want := nodeProps(t, id)["blindTerms"]
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	// Terms of no analysis, and of an earlier one.
	if _, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (m:Memory) WHERE m.id IN $ids REMOVE m.blindTerms, m.blindKeyId, m.blindTermsVersion`,
		map[string]any{"ids": []string{id, lostID}}, driver.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Minute).UTC()
	hi := trustAt(membrane.SensitivityHigh, scope)
	if got, _ := retrieveAs(t, server, hi, "apple", now); len(got) != 0 {
		t.Fatalf("found before the re-index: %v", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// A start (of a database at the current version: a marker of this
	// test's own) does not look at them.
	neo4j.SetSchemaNode(server, schemaAt(t, neo4j.SchemaVersion), []string{scope})
	for range 2 {
		if err := server.Start(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	if p := nodeProps(t, id); p["blindTerms"] != nil {
		t.Fatalf("a start gave a record blind terms: %v", p["blindTerms"])
	}
	migrated, skipped, err := server.BlindTermsIn(ctx, []string{scope})
	if err != nil {
		t.Fatal(err)
	}
	if migrated != 1 || skipped != 1 {
		t.Fatalf("re-index: %d migrated, %d skipped; want 1 and 1", migrated, skipped)
	}
	if got := nodeProps(t, id)["blindTerms"]; got != want {
		t.Fatalf("blind terms after the re-index %v, want %v", got, want)
	}
	if p := nodeProps(t, lostID); p["blindTerms"] != nil {
		t.Fatalf("a record sealed under an unknown key got blind terms: %v", p["blindTerms"])
	}
	if got, _ := retrieveAs(t, server, hi, "apple", now); !slices.Equal(got, []string{id}) {
		t.Fatalf("after the re-index: %v", got)
	}
	// Run again, it rewrites nothing and skips the same record.
	if migrated, skipped, err := server.BlindTermsIn(ctx, []string{scope}); err != nil || migrated != 0 || skipped != 1 {
		t.Fatalf("again: %d migrated, %d skipped, %v; want 0 and 1", migrated, skipped, err)
	}
}
