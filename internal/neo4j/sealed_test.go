package neo4j_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// twoKeys returns two keys of the test's own (ids id1 and id2 under one
// new suffix, bytes b1 and b2) and a scope of the test's own with a store
// sealing with the first (see neo4jtest.SealedScope): the store of a key
// about to be retired, or lost, beside its successor.
func twoKeys(t *testing.T, id1 string, b1 byte, id2 string, b2 byte) (first, second membrane.SealKey, scope string, db *neo4j.DB) {
	t.Helper()
	suffix := membrane.NewID()
	first, second = neo4jtest.SealKey(id1+"-"+suffix, b1), neo4jtest.SealKey(id2+"-"+suffix, b2)
	scope, db = neo4jtest.SealedScope(t, []membrane.SealKey{first}, first.ID)
	return first, second, scope, db
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
	recs := raw(t, "MATCH (m:Memory {id: $id}) RETURN properties(m)", map[string]any{"id": id})
	if len(recs) != 1 {
		t.Fatalf("read node %s: %d records", id, len(recs))
	}
	p, _ := recs[0].Values[0].(map[string]any)
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
	oldKey, newKey, scope, before := twoKeys(t, "old", 11, "new", 12)
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
	_, kept, scope, withLost := twoKeys(t, "lost", 13, "kept", 14)
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
	_, key, scope, withLost := twoKeys(t, "miglost", 16, "mig", 15)
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{key}, key.ID)
	id := sealedFact(t, server, scope, membrane.SensitivityHigh, "orchard", "grows", "heritage apples")
	lostID := sealedFact(t, withLost, scope, membrane.SensitivityHigh, "orchard", "sells", "cider")
	want := nodeProps(t, id)["blindTerms"]
	// Terms of no analysis, and of an earlier one.
	raw(t, `MATCH (m:Memory) WHERE m.id IN $ids REMOVE m.blindTerms, m.blindKeyId, m.blindTermsVersion`,
		map[string]any{"ids": []string{id, lostID}})
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

// TestSealedDigestsKeyed: a sealed fact's stored factKey is keyed: neither
// the unkeyed SHA-256 of its fields (the digest of an earlier version,
// which confirmed a guess of them) nor the keyed digest under another key
// matches it, while consolidation still finds the fact by its key and
// groups sealed duplicates (and only duplicates: sealed facts store no
// subject nor object, and used to be grouped all together); after a
// rotation and `membrane reseal` it still does, under the new key only.
// A sealed fact stored with the unkeyed digest (an old database) gets the
// keyed one at the next start. A sealed competence's skillKey and a sealed
// entity's blindNames are keyed alike.
func TestSealedDigestsKeyed(t *testing.T) {
	oldKey, newKey, scope, before := twoKeys(t, "dold", 41, "dnew", 42)
	high := membrane.SensitivityHigh
	key := membrane.FactKey{Scope: scope, Subject: "payroll", Predicate: "runs_on", Object: "the 25th"}
	first := sealedFact(t, before, scope, high, key.Subject, key.Predicate, key.Object)
	second := sealedFact(t, before, scope, high, key.Subject, key.Predicate, key.Object)
	other := sealedFact(t, before, scope, high, "payroll", "runs_on", "the 1st")

	stored, _ := nodeProps(t, first)["factKey"].(string)
	unkeyed := sha256.New()
	for _, f := range key.Fields() {
		unkeyed.Write([]byte(f + "\x00"))
	}
	for name, guess := range map[string]string{
		"unkeyed SHA-256 of the fields (FactKey.Hash)": hex.EncodeToString(unkeyed.Sum(nil)),
		"keyed under another key":                      membrane.Digest(membrane.DigestKey(newKey.Key), membrane.DigestFact, key.Fields()...),
	} {
		if stored == guess {
			t.Fatalf("the stored factKey is the %s: a guess is confirmed without the key", name)
		}
	}
	if want := membrane.Digest(membrane.DigestKey(oldKey.Key), membrane.DigestFact, key.Fields()...); stored != want {
		t.Fatalf("factKey %s, want the keyed digest %s", stored, want)
	}
	// The same of a sealed competence's skillKey and of a sealed entity's
	// blindNames: no guess of the skill's or the entity's name is
	// confirmed without the key.
	t.Run("skillKey and blindNames", func(t *testing.T) {
		sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
		skill := membrane.CompetenceKey{SkillName: "open the payroll vault", Scope: scope}
		r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeCompetence, Scope: &scope, Sensitivity: &high,
			Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: skill.SkillName}}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.CreateRecords(sys, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", time.Now())}}); err != nil {
			t.Fatal(err)
		}
		unkeyedSkill := sha256.Sum256([]byte(skill.Scope + "\x00" + skill.SkillName))
		entity := captureProject(t, before, writerAt(high, scope), scope, high, "Payroll Vault", "PV-25")
		if len(entity) != 1 {
			t.Fatalf("capture mentions %v, want one entity", entity)
		}
		var blind []string
		if list, ok := nodeProps(t, entity[0])["blindNames"].([]any); ok {
			for _, b := range list {
				blind = append(blind, fmt.Sprint(b))
			}
		}
		var names, guesses, want []string
		for _, n := range []string{"Payroll Vault", "PV-25"} {
			term := membrane.NormaliseTerm(n)
			names = append(names, term)
			want = append(want, membrane.Digest(membrane.DigestKey(oldKey.Key), membrane.DigestEntityName, scope, term))
			for _, plain := range []string{term, scope + "\x00" + term} {
				h := sha256.Sum256([]byte(plain))
				guesses = append(guesses, hex.EncodeToString(h[:]))
			}
			guesses = append(guesses, membrane.Digest(membrane.DigestKey(newKey.Key), membrane.DigestEntityName, scope, term))
		}
		checks := []struct {
			what    string
			stored  []string
			guesses []string
			want    []string
		}{
			{"skillKey", []string{fmt.Sprint(nodeProps(t, r.ID)["skillKey"])}, []string{hex.EncodeToString(unkeyedSkill[:]), // CompetenceKey.Hash
				membrane.Digest(membrane.DigestKey(newKey.Key), membrane.DigestSkill, skill.Fields()...)},
				[]string{membrane.Digest(membrane.DigestKey(oldKey.Key), membrane.DigestSkill, skill.Fields()...)}},
			{"blindNames of " + strings.Join(names, ", "), blind, guesses, want},
		}
		for _, c := range checks {
			for _, g := range c.guesses {
				if slices.Contains(c.stored, g) {
					t.Fatalf("%s %v holds the guess %s (unkeyed, or keyed under another key)", c.what, c.stored, g)
				}
			}
			for _, w := range c.want {
				if !slices.Contains(c.stored, w) {
					t.Fatalf("%s %v, want the keyed digest %s among them", c.what, c.stored, w)
				}
			}
		}
	})

	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	consolidation := func(t *testing.T, db *neo4j.DB) {
		t.Helper()
		found, err := db.FindFacts(sys, []membrane.FactKey{key})
		if err != nil {
			t.Fatal(err)
		}
		if f := found[key]; f == nil || f.ID != first {
			t.Fatalf("FindFacts: %+v, want %s", found[key], first)
		}
		groups, err := db.DuplicateFacts(sys, membrane.SweepOptions{Now: time.Now(), Scopes: []string{scope}}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := [][]string{{first, second}}; len(groups) != 1 || !slices.Equal(groups[0], want[0]) {
			t.Fatalf("duplicate groups %v, want %v (not %s)", groups, want, other)
		}
	}
	t.Run("before rotation", func(t *testing.T) { consolidation(t, before) })

	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	if _, err := rotated.Reseal(sys, oldKey.ID); err != nil {
		t.Fatal(err)
	}
	if p := nodeProps(t, first); p["factKey"] != membrane.Digest(membrane.DigestKey(newKey.Key), membrane.DigestFact, key.Fields()...) || p["digestKeyId"] != newKey.ID {
		t.Fatalf("after reseal: factKey %v under %v, want the new key's", p["factKey"], p["digestKeyId"])
	}
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	t.Run("after reseal, new key only", func(t *testing.T) { consolidation(t, newOnly) })

}

// writerAt is a writer with ceiling sens over scopes.
func writerAt(sens membrane.Sensitivity, scopes ...string) membrane.Trust {
	return membrane.Trust{Principal: membrane.Principal{Actor: "writer-" + string(sens), Role: membrane.RoleWriter, MaxSensitivity: sens, Scopes: scopes},
		Ceiling: sens.Level(), Scopes: scopes}
}

// captureProject captures, as trust, an event of sensitivity sens in scope
// that names the project name (with aliases), and returns the ids of the
// entities its primary record mentions.
func captureProject(t *testing.T, db *neo4j.DB, trust membrane.Trust, scope string, sens membrane.Sensitivity, name string, aliases ...string) []string {
	t.Helper()
	project := map[string]any{"name": name}
	if len(aliases) > 0 {
		as := make([]any, len(aliases))
		for i, a := range aliases {
			as[i] = a
		}
		project["aliases"] = as
	}
	c, err := membrane.DefaultPolicy().BuildCapture(membrane.CaptureInput{Source: "agent", Scope: &scope, Sensitivity: &sens,
		Content: map[string]any{"project": project, "note": "weekly sync"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Capture(membrane.NewContextWithTrust(t.Context(), trust), nil, c, trust.Principal.Actor)
	if err != nil {
		t.Fatalf("capture as %s: %v", trust.Principal.Actor, err)
	}
	var out []string
	for _, e := range res.Edges {
		if e.Predicate == membrane.PredMentions && e.SourceID == res.Primary.ID {
			out = append(out, e.TargetID)
		}
	}
	return out
}

// plaintextAnywhere returns where any of needles (lower case) occurs in the
// database, read directly as someone holding its files would: every
// property of every node and relationship (strings and lists of them),
// and every full-text index queried for each needle as a whole name and as
// a word.
func plaintextAnywhere(t *testing.T, needles ...string) []string {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	// One pass over every property of the database (it is shared by every
	// test and large: a pass takes seconds), all needles at once.
	var out []string
	res, err := driver.ExecuteQuery(t.Context(), drv, `
		CALL () {
		  MATCH (n) UNWIND keys(n) AS k RETURN 'node ' + labels(n)[0] + '.' + k AS at, n[k] AS v
		  UNION ALL
		  MATCH ()-[n]->() UNWIND keys(n) AS k RETURN 'relationship ' + type(n) + '.' + k AS at, n[k] AS v
		}
		WITH at, CASE WHEN v IS :: LIST<ANY> THEN [x IN v | toLower(toString(x))] ELSE [toLower(toString(v))] END AS texts
		UNWIND $needles AS needle
		WITH at, needle WHERE any(x IN texts WHERE x CONTAINS needle)
		RETURN DISTINCT needle + ' in ' + at`, map[string]any{"needles": needles}, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Records {
		out = append(out, r.Values[0].(string))
	}
	res, err = driver.ExecuteQuery(t.Context(), drv, `SHOW FULLTEXT INDEXES YIELD name, entityType WHERE entityType = 'NODE' RETURN name`,
		nil, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Records {
		index := r.Values[0].(string)
		for _, needle := range needles {
			for _, lq := range []string{`"` + needle + `"`, strings.Fields(needle)[0]} {
				hits, err := driver.ExecuteQuery(t.Context(), drv, `CALL db.index.fulltext.queryNodes($index, $q) YIELD node RETURN count(node)`,
					map[string]any{"index": index, "q": lq}, driver.EagerResultTransformer)
				if err != nil {
					t.Fatal(err)
				}
				if n := hits.Records[0].Values[0].(int64); n > 0 {
					out = append(out, needle+" in index "+index)
				}
			}
		}
	}
	return out
}

// TestSealedEntityNamesAtRest: a sealed (high) entity's name and aliases
// are nowhere in the database in clear, neither after its capture nor
// after a restart (a second store over the same database running the
// start-up migrations, which once wrote them in clear into Entity.terms);
// captures are resolved to it through its keyed blind names only for
// callers who see it in full: a low or medium writer naming it gets an
// entity of its own, a high writer is linked to it, before and after the
// restart.
func TestSealedEntityNamesAtRest(t *testing.T) {
	neo4jtest.DB(t)
	// The random end of a UUIDv7 (its start is the time: two processes
	// started in the same minute would share it).
	id := membrane.NewID()
	suffix := strings.ToLower(id[len(id)-12:])
	key := neo4jtest.SealKey("ent-"+suffix, 21)
	scope, first := neo4jtest.SealedScope(t, []membrane.SealKey{key}, key.ID)
	name, alias := "Zephyrine Vault "+suffix, "zv-"+suffix
	needles := []string{strings.ToLower(name), alias}
	high := membrane.SensitivityHigh
	got := captureProject(t, first, writerAt(high, scope), scope, high, name, alias)
	if len(got) != 1 {
		t.Fatalf("the high capture mentions %v", got)
	}
	hidden := got[0]
	if p := nodeProps(t, hidden); p["encrypted"] != true {
		t.Fatalf("the high entity is not sealed: %v", p)
	}
	// Resolved for a high writer through the blind names before the
	// restart (the scan below, after it, covers what the capture wrote).
	if got := captureProject(t, first, writerAt(high, scope), scope, high, strings.ToUpper(name)); !slices.Equal(got, []string{hidden}) {
		t.Fatalf("a high capture naming the entity mentions %v, want %v", got, []string{hidden})
	}

	// The restart: a second store starts over the database as this
	// version wrote it.
	second := neo4jtest.OpenSealing(t, []membrane.SealKey{key}, key.ID)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	if err := second.Start(ctx, true); err != nil {
		t.Fatal(err)
	}
	if p := nodeProps(t, hidden); p["terms"] != nil || p["blindNames"] == nil {
		t.Fatalf("after a restart: terms %v, blind names %v", p["terms"], p["blindNames"])
	}
	if where := plaintextAnywhere(t, needles...); len(where) > 0 {
		t.Fatalf("after the restart, sealed names in clear: %v", where)
	}
	tests := []struct {
		name   string
		trust  membrane.Trust
		sens   membrane.Sensitivity
		linked bool
	}{
		{"low writer", writerAt(membrane.SensitivityLow, scope), membrane.SensitivityLow, false},
		{"medium writer (sees it redacted)", writerAt(membrane.SensitivityMedium, scope), membrane.SensitivityMedium, false},
		{"high writer by alias", writerAt(high, scope), high, true},
		{"hyper writer", writerAt(membrane.SensitivityHyper, scope), membrane.SensitivityHyper, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := name
			if tt.name == "high writer by alias" {
				n = alias
			}
			got := captureProject(t, second, tt.trust, scope, tt.sens, n)
			if len(got) != 1 {
				t.Fatalf("mentions %v", got)
			}
			if linked := got[0] == hidden; linked != tt.linked {
				t.Fatalf("linked to the sealed entity: %v, want %v", linked, tt.linked)
			}
		})
	}

	// A key rotation: `membrane reseal` recomputes the blind names under
	// the new key, and a server holding only that key still resolves the
	// entity.
	newKey := neo4jtest.SealKey("ent-new-"+suffix, 22)
	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, key}, newKey.ID).Reseal(sys, key.ID); err != nil {
		t.Fatal(err)
	}
	if p := nodeProps(t, hidden); p["digestKeyId"] != newKey.ID || p["terms"] != nil {
		t.Fatalf("after reseal: digestKeyId %v, terms %v", p["digestKeyId"], p["terms"])
	}
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	if got := captureProject(t, newOnly, writerAt(high, scope), scope, high, name); !slices.Equal(got, []string{hidden}) {
		t.Fatalf("after reseal, with the new key only, a high capture mentions %v, want %v", got, []string{hidden})
	}

	// A replica of an earlier version (a rollback) writes the names back in
	// clear into Entity.terms: they are never used to link, even by a
	// caller who sees the entity (its blind names are removed here, so
	// that only the plaintext terms could link it).
	raw(t, `MATCH (e:Entity {id: $id}) SET e.terms = $terms REMOVE e.blindNames`, map[string]any{"id": hidden, "terms": needles})
	if err := newOnly.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := captureProject(t, newOnly, writerAt(membrane.SensitivityHyper, scope), scope, high, name); slices.Contains(got, hidden) {
		t.Fatalf("a capture linked to the sealed entity through plaintext terms an old replica wrote: %v", got)
	}
}

// reclassify revises record id to sensitivity sens and nothing else (its
// payload unchanged), as consolidation does when it raises a competence.
func reclassify(t *testing.T, db *neo4j.DB, id string, sens membrane.Sensitivity) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	_, err := db.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		n := *locked[id]
		n.Sensitivity = sens
		n.Version++
		n.UpdatedAt = time.Now().UTC()
		return &membrane.Change{Updates: []*membrane.Record{&n}, Result: &n}, nil
	})
	if err != nil {
		t.Fatalf("reclassify %s to %s: %v", id, sens, err)
	}
}

// TestSealOnSensitivityChange: a revision that changes only a record's
// sensitivity across the encryption threshold changes how it is stored:
// raised to a sealed level, no property holds its text (payload sealed,
// plaintext terms and copies gone, blind terms written); lowered below it,
// the payload is in clear again with plain search terms and no blind terms,
// and a reader of the lower level finds it by text.
func TestSealOnSensitivityChange(t *testing.T) {
	db := neo4jtest.DB(t)
	words := []string{"lighthouse", "guards", "smuggler", "tunnels"}
	tests := []struct {
		name     string
		from, to membrane.Sensitivity
		sealed   bool
	}{
		{"medium to high", membrane.SensitivityMedium, membrane.SensitivityHigh, true},
		{"low to hyper", membrane.SensitivityLow, membrane.SensitivityHyper, true},
		{"high to medium", membrane.SensitivityHigh, membrane.SensitivityMedium, false},
		{"hyper to public", membrane.SensitivityHyper, membrane.SensitivityPublic, false},
		{"high to hyper", membrane.SensitivityHigh, membrane.SensitivityHyper, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			id := sealedFact(t, db, scope, tt.from, "lighthouse", "guards", "smuggler tunnels")
			reclassify(t, db, id, tt.to)
			p := nodeProps(t, id)
			if p["sensitivity"] != string(tt.to) {
				t.Fatalf("sensitivity = %v, want %s", p["sensitivity"], tt.to)
			}
			if tt.sealed {
				if !membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != true || p["blindTerms"] == nil {
					t.Fatalf("not sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
				}
				for k, v := range p {
					s := strings.ToLower(fmt.Sprint(v))
					for _, w := range words {
						if strings.Contains(s, w[:5]) {
							t.Errorf("property %s holds %q in clear: %s", k, w, s)
						}
					}
				}
				return
			}
			if membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != nil || p["blindTerms"] != nil || p["blindKeyId"] != nil {
				t.Fatalf("still sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
			}
			if terms := fmt.Sprint(p["searchTerms"]); !strings.Contains(terms, "lighthous") || p["subject"] != "lighthouse" {
				t.Fatalf("plain terms missing: searchTerms %q, subject %v", terms, p["subject"])
			}
			got, _ := retrieveAs(t, db, trustAt(tt.to, scope), "smugglers", time.Now().Add(time.Minute).UTC())
			if !slices.Equal(got, []string{id}) {
				t.Fatalf("retrieve after lowering: %v, want %s", got, id)
			}
		})
	}
}

// built is a record of payload p (episodic or plan graph) in scope, created at at with sensitivity
// sens, stored with embedding vec (when not nil) as the system.
func built(t *testing.T, db *neo4j.DB, scope string, sens membrane.Sensitivity, at time.Time, p membrane.PayloadInput, vec []float64) string {
	t.Helper()
	typ := membrane.TypeEpisodic
	if p.PlanGraph != nil {
		typ = membrane.TypePlanGraph
	}
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: typ, Scope: &scope, Sensitivity: &sens, Payload: p}, at)
	if err != nil {
		t.Fatal(err)
	}
	in := &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "test", at)}
	if vec != nil {
		in.Embedding, in.EmbeddingModel = vec, "test"
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{in}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// count runs a counting statement directly against the database.
func count(t *testing.T, stmt string, params map[string]any) int64 {
	t.Helper()
	recs := raw(t, stmt, params)
	if len(recs) != 1 {
		t.Fatalf("%s: %d records", stmt, len(recs))
	}
	n, _ := recs[0].Values[0].(int64)
	return n
}

// TestSealTransitionDetaches: a record raised to a sealed level keeps
// nothing beside it that a record created sealed lacks: no embedding, no
// plan steps (ops and parameters in clear), no place in a session chain
// (its neighbours are linked to each other); lowered again, it is linked
// into its chain and gets its plan steps back. A plan created sealed has no
// plan steps.
func TestSealTransitionDetaches(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	base := time.Now().Add(-time.Hour).UTC()
	ep := func(min int, text string, vec []float64) string {
		at := base.Add(time.Duration(min) * time.Minute)
		return built(t, db, scope, membrane.SensitivityLow, at, membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{SessionID: "s",
			Timeline: []membrane.TimelineEvent{{T: at, EventKind: "message", Ref: "m", Summary: text}}}}, vec)
	}
	a, b, c := ep(0, "first", nil), ep(1, "second", []float64{0.1, 0.2, 0.3}), ep(2, "third", nil)
	plan := func(sens membrane.Sensitivity) string {
		return built(t, db, scope, sens, base, membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "deploy-" + string(sens),
			Nodes: []membrane.PlanNode{{ID: "n1", Op: "drain_secret_vault", Params: map[string]any{"host": "vault-7"}}, {ID: "n2", Op: "restart"}},
			Edges: []membrane.PlanEdge{{From: "n1", To: "n2", Kind: "control"}}}}, nil)
	}
	p, sealedPlan := plan(membrane.SensitivityLow), plan(membrane.SensitivityHigh)
	chain := func() string {
		ids := map[string]string{a: "a", b: "b", c: "c"}
		var links []string
		for _, r := range raw(t, `MATCH (x:Memory)-[:NEXT]->(y:Memory) WHERE x.scope = $scope RETURN x.id, y.id`,
			map[string]any{"scope": scope}) {
			links = append(links, ids[r.Values[0].(string)]+ids[r.Values[1].(string)])
		}
		slices.Sort(links)
		return strings.Join(links, " ")
	}
	vectors := func(id string) int64 {
		return count(t, `MATCH (:Memory {id: $id})-[:HAS_EMBEDDING]->(v:MemoryVector) RETURN count(v)`, map[string]any{"id": id})
	}
	steps := func(id string) int64 {
		return count(t, `MATCH (:Memory {id: $id})-[:HAS_STEP]->(s:PlanStep) RETURN count(s)`, map[string]any{"id": id})
	}
	if got := steps(sealedPlan); got != 0 {
		t.Errorf("a plan created sealed has %d plan steps", got)
	}
	if chain() != "ab bc" || vectors(b) != 1 || steps(p) != 2 {
		t.Fatalf("before: chain %q, vectors %d, steps %d", chain(), vectors(b), steps(p))
	}
	reclassify(t, db, b, membrane.SensitivityHigh)
	reclassify(t, db, p, membrane.SensitivityHyper)
	if chain() != "ac" || vectors(b) != 0 || steps(p) != 0 {
		t.Errorf("raised: chain %q (want ac), vectors %d, steps %d (want none)", chain(), vectors(b), steps(p))
	}
	reclassify(t, db, b, membrane.SensitivityMedium)
	reclassify(t, db, p, membrane.SensitivityLow)
	reclassify(t, db, sealedPlan, membrane.SensitivityLow)
	if chain() != "ab bc" || steps(p) != 2 || steps(sealedPlan) != 2 {
		t.Errorf("lowered: chain %q (want ab bc), steps %d and %d (want 2)", chain(), steps(p), steps(sealedPlan))
	}
}

// moveRecord revises record id to sensitivity sens in scope, writing no
// audit entry of its own, as consolidation raising a competence does.
func moveRecord(t *testing.T, db *neo4j.DB, id string, sens membrane.Sensitivity, scope string) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	_, err := db.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		n := *locked[id]
		n.Sensitivity, n.Scope = sens, scope
		n.Version++
		n.UpdatedAt = time.Now().UTC()
		return &membrane.Change{Updates: []*membrane.Record{&n}, Result: &n}, nil
	})
	if err != nil {
		t.Fatalf("move %s: %v", id, err)
	}
}

// auditSeen is what reader t learns of record id's audit entries: through
// auditLog filtered by record and by actor, Record.auditLog, and the
// metrics' count of entries over scopes.
func auditSeen(t *testing.T, db *neo4j.DB, trust membrane.Trust, id string, scopes []string) (byRecord, byActor, batch int, counted int64) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), trust)
	page := membrane.Page{First: 100}
	p, err := db.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &id}, page)
	if err != nil {
		t.Fatal(err)
	}
	byRecord = len(p.Items)
	actor := "stamp-writer"
	if p, err = db.FindAuditEntries(ctx, membrane.AuditFilter{Actor: &actor}, page); err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Items {
		if a.RecordID == id {
			byActor++
		}
	}
	pages, err := db.AuditPagesForRecords(ctx, []string{id}, "", page)
	if err != nil {
		t.Fatal(err)
	}
	if pages[id] != nil {
		batch = len(pages[id].Items)
	}
	m, err := db.Metrics(ctx, trust, scopes, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return byRecord, byActor, batch, m.AuditEntries
}

// entryProps returns the stored properties of record id's audit entries.
func entryProps(t *testing.T, id string) []map[string]any {
	t.Helper()
	recs := raw(t, "MATCH (:Memory {id: $id})-[:HAS_AUDIT]->(a:AuditEntry) RETURN properties(a)", map[string]any{"id": id})
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		out[i], _ = r.Values[0].(map[string]any)
	}
	return out
}

// TestAuditFollowsRecordMove: a record raised above a reader's ceiling, or
// moved out of its scopes, in place (consolidation raising a competence)
// takes its earlier audit entries with it: the reader no longer gets them
// from auditLog (by record or by actor), Record.auditLog or the metrics'
// count; entries now at a sealed level have their free text sealed.
func TestAuditFollowsRecordMove(t *testing.T) {
	db := neo4jtest.DB(t)
	tests := []struct {
		name   string
		to     membrane.Sensitivity
		moved  bool // to another scope
		sealed bool
	}{
		{name: "raised above the ceiling", to: membrane.SensitivityHigh, sealed: true},
		{name: "raised to redacted", to: membrane.SensitivityMedium},
		{name: "moved to another scope", to: membrane.SensitivityLow, moved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
			at := time.Now().Add(-time.Minute).UTC()
			r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope,
				Sensitivity: ptr(membrane.SensitivityLow), Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{SessionID: "s",
					Timeline: []membrane.TimelineEvent{{T: at, EventKind: "message", Ref: "m", Summary: "pattern"}}}}}, at)
			if err != nil {
				t.Fatal(err)
			}
			in := &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "stamp-writer", "kept the lighthouse log", at)}
			sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
			if _, err := db.CreateRecords(sys, nil, []*membrane.Ingested{in}); err != nil {
				t.Fatal(err)
			}
			low := trustAt(membrane.SensitivityLow, scope)
			scopes := []string{scope, other}
			if a, b, c, n := auditSeen(t, db, low, r.ID, scopes); a != 1 || b != 1 || c != 1 || n != 1 {
				t.Fatalf("before: the reader sees %d, %d, %d entries and counts %d, want 1 each", a, b, c, n)
			}
			dest := scope
			if tt.moved {
				dest = other
			}
			moveRecord(t, db, r.ID, tt.to, dest)
			if a, b, c, n := auditSeen(t, db, low, r.ID, scopes); a+b+c != 0 || n != 0 {
				t.Errorf("after: the reader sees %d, %d, %d entries and counts %d, want none", a, b, c, n)
			}
			entries := entryProps(t, r.ID)
			if len(entries) != 1 {
				t.Fatalf("%d entries stored, want 1", len(entries))
			}
			e := entries[0]
			if integer(e["sensitivityLevel"]) != int64(tt.to.Level()) || e["scope"] != dest {
				t.Errorf("entry stamped %v/%v, want %d/%s", e["sensitivityLevel"], e["scope"], tt.to.Level(), dest)
			}
			if rat, _ := e["rationale"].(string); tt.sealed != membrane.IsSealed(rat) || (tt.sealed && strings.Contains(rat, "lighthouse")) {
				t.Errorf("rationale stored as %q, sealed %v wanted", rat, tt.sealed)
			}
			// A reader cleared for the record still reads the entry in clear.
			high := trustAt(membrane.SensitivityHyper, dest)
			p, err := db.FindAuditEntries(membrane.NewContextWithTrust(t.Context(), high), membrane.AuditFilter{RecordID: &r.ID}, membrane.Page{First: 10})
			if err != nil || len(p.Items) != 1 || p.Items[0].Rationale != "kept the lighthouse log" {
				t.Fatalf("cleared reader: %v, %+v", err, p)
			}
		})
	}
}

func integer(v any) int64 {
	n, _ := v.(int64)
	return n
}

// TestRevisionOfUnopenedRecord: a revision or deletion naming a record
// sealed under a key this server lacks answers a request that may not see
// the record exactly as it answers an unknown id (an earlier version
// decoded the record before the plan checked visibility, and answered
// FAILED_PRECONDITION "sealed under an encryption key this server does not
// hold": an existence oracle for a LOW writer naming a HYPER record). A
// request seeing it redacted is refused as for any redacted record, and
// only one that would see it in full learns that it does not open.
func TestRevisionOfUnopenedRecord(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("ulost-"+suffix, 51)
	kept := neo4jtest.SealKey("ukept-"+suffix, 52)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
	withLost := neo4jtest.OpenSealing(t, []membrane.SealKey{lost}, lost.ID)
	neo4jtest.DeleteAtEnd(t, withLost, scope)
	hidden := sealedFact(t, withLost, scope, membrane.SensitivityHyper, "vault", "opens_with", "the lost key")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	unknown := membrane.NewID()

	// The revision service's guard (membrane.Trust.GuardPlan): locked records in full
	// view, optional ones counted missing when invisible.
	retract := func(trust membrane.Trust, id string) membrane.PlanFunc {
		return func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			if err := trust.CanRevise(locked[id]); err != nil {
				return nil, err
			}
			return membrane.Retract(locked[id], membrane.RevisionMeta{Actor: trust.Principal.Actor}, time.Now())
		}
	}
	revise := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, []string{id}, nil, retract(trust, id))
		return err
	}
	del := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.DeleteRecord(ctx, id, func(r *membrane.Record, _ []membrane.AuditRef) (*membrane.AuditEntry, error) {
			if err := trust.CanRevise(r); err != nil {
				return nil, err
			}
			return &membrane.AuditEntry{ID: membrane.NewID(), RecordID: r.ID, Action: membrane.AuditDelete, Timestamp: time.Now()}, nil
		})
		return err
	}
	// read: the record named as an optional one (relate's target): an
	// invisible one is absent, as an unknown id.
	read := func(trust membrane.Trust, id string) error {
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, nil, []string{id}, func(_, read map[string]*membrane.Record) (*membrane.Change, error) {
			if r := read[id]; r != nil {
				if trust.Visibility(r) == membrane.Invisible {
					return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
				}
				return nil, membrane.Errorf(membrane.EFORBIDDEN, "present")
			}
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		})
		return err
	}
	paths := map[string]func(membrane.Trust, string) error{"revise": revise, "deleteRecord": del, "optional read": read}

	for name, trust := range map[string]membrane.Trust{
		"low writer, same scope":    writerAt(membrane.SensitivityLow, scope),
		"hyper writer, other scope": writerAt(membrane.SensitivityHyper, other),
	} {
		for path, run := range paths {
			t.Run(name+"/"+path, func(t *testing.T) {
				got, want := run(trust, hidden), run(trust, unknown)
				if got == nil || want == nil {
					t.Fatalf("hidden: %v, unknown: %v; want both refused", got, want)
				}
				if g, w := strings.ReplaceAll(got.Error(), hidden, "ID"), strings.ReplaceAll(want.Error(), unknown, "ID"); g != w ||
					membrane.ErrorCode(got) != membrane.ErrorCode(want) {
					t.Fatalf("the hidden record answers %q (%s), an unknown id %q (%s)", g, membrane.ErrorCode(got), w, membrane.ErrorCode(want))
				}
			})
		}
	}
	for _, c := range []struct {
		name  string
		trust membrane.Trust
		want  string
	}{
		{"high writer sees it redacted", writerAt(membrane.SensitivityHigh, scope), membrane.EFORBIDDEN},
		{"hyper writer would see it in full", writerAt(membrane.SensitivityHyper, scope), membrane.EPRECONDITION},
	} {
		for _, path := range []string{"revise", "deleteRecord"} {
			t.Run(c.name+"/"+path, func(t *testing.T) {
				if err := paths[path](c.trust, hidden); membrane.ErrorCode(err) != c.want {
					t.Fatalf("%v, want %s", err, c.want)
				}
			})
		}
	}
	// A plan that does not check visibility (the server's own work) still
	// cannot revise a record that does not open.
	t.Run("unchecked plan", func(t *testing.T) {
		trust := writerAt(membrane.SensitivityHigh, scope)
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		_, err := server.Revise(ctx, nil, []string{hidden}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			return &membrane.Change{}, nil
		})
		if membrane.ErrorCode(err) != membrane.EPRECONDITION {
			t.Fatalf("%v, want %s", err, membrane.EPRECONDITION)
		}
	})
}

// TestFindByKeySkipsUnopened: consolidation finds the oldest fact (and
// competence) of a key that opens. An earlier version read only the oldest
// of each key and dropped it when it did not open, so a newer readable one
// of the same key was never found, and every supporting episode created
// another duplicate.
func TestFindByKeySkipsUnopened(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("flost-"+suffix, 53)
	kept := neo4jtest.SealKey("fkept-"+suffix, 54)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	high := membrane.SensitivityHigh
	// A payload sealed under the lost key, given to the oldest record of
	// each key below: its digest is the server's, its payload does not open.
	sealedElsewhere := nodeProps(t, sealedFact(t, withLost, scope, high, "unrelated", "is", "sealed elsewhere"))["payload"]
	unopen := func(id string) {
		t.Helper()
		raw(t, `MATCH (m:Memory {id: $id}) SET m.payload = $payload`, map[string]any{"id": id, "payload": sealedElsewhere})
	}

	t.Run("facts", func(t *testing.T) {
		key := membrane.FactKey{Scope: scope, Subject: "deploy", Predicate: membrane.PredicateObservedIn, Object: "canary green"}
		oldest := sealedFact(t, server, scope, high, key.Subject, key.Predicate, key.Object)
		readable := sealedFact(t, server, scope, high, key.Subject, key.Predicate, key.Object)
		unopen(oldest)
		found, err := server.FindFacts(sys, []membrane.FactKey{key})
		if err != nil {
			t.Fatal(err)
		}
		if f := found[key]; f == nil || f.ID != readable {
			t.Fatalf("FindFacts: %+v, want %s (the oldest, %s, does not open)", f, readable, oldest)
		}
	})
	t.Run("competences", func(t *testing.T) {
		key := membrane.CompetenceKey{SkillName: "release-" + suffix, Scope: scope}
		competence := func() string {
			r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeCompetence, Scope: &scope, Sensitivity: &high,
				Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: key.SkillName}}}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := server.CreateRecords(sys, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", time.Now())}}); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		oldest, readable := competence(), competence()
		unopen(oldest)
		found, err := server.FindCompetences(sys, []membrane.CompetenceKey{key})
		if err != nil {
			t.Fatal(err)
		}
		if c := found[key]; c == nil || c.ID != readable {
			t.Fatalf("FindCompetences: %+v, want %s (the oldest, %s, does not open)", c, readable, oldest)
		}
	})
}

// TestUnknownKeyStart: records sealed under a key the server does not hold
// (a lost key, and a key changed under the same id) stop neither Migrate
// nor a start: Migrate counts them (Unreadable) and a start reports the
// count it stored, and reads serve every record: the unreadable ones
// redacted, never an error for the page.
func TestUnknownKeyStart(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("lost-"+suffix, 31)
	kept := neo4jtest.SealKey("kept-"+suffix, 32)
	// A key that sealed records, then changed under the same id: the
	// server holds the changed material.
	original := neo4jtest.SealKey("changed-"+suffix, 33)
	changed := neo4jtest.SealKey(original.ID, 36)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	high := membrane.SensitivityHigh
	lostEntity := captureProject(t, withLost, writerAt(high, scope), scope, high, "Lost Harbour "+suffix)
	lostFact := sealedFact(t, withLost, scope, high, "lighthouse", "guards", "the lost harbour")
	withOriginal := neo4jtest.OpenSealing(t, []membrane.SealKey{original}, original.ID)
	if err := withOriginal.Start(t.Context(), true); err != nil { // records the original key's check value
		t.Fatal(err)
	}
	changedFact := sealedFact(t, withOriginal, scope, high, "lighthouse", "guards", "the changed harbour")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept, changed}, kept.ID)
	readable := sealedFact(t, server, scope, high, "lighthouse", "guards", "the kept harbour")
	plain := sealedFact(t, server, scope, membrane.SensitivityLow, "lighthouse", "stands", "on the cliff")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := server.Migrate(ctx); err != nil {
		t.Fatalf("migrate with a key missing: %v", err)
	}
	// The four of this test (the lost key sealed the capture's event and
	// entity, and the fact), by their key ids (other tests' records under
	// their own keys are in the shared database too): the changed key's
	// record too. A start reports the count Migrate stored.
	if err := server.Start(ctx, false); err != nil {
		t.Fatalf("start with a key missing: %v", err)
	}
	byKey := server.UnreadableByKey()
	if byKey[lost.ID] != 3 || byKey[changed.ID] != 1 || byKey[kept.ID] != 0 {
		t.Fatalf("unreadable by key = %v, want %s: 3, %s: 1, %s: none", byKey, lost.ID, changed.ID, kept.ID)
	}
	if got := server.ChangedKeys(); !slices.Equal(got, []string{changed.ID}) {
		t.Fatalf("changed keys = %v, want [%s]", got, changed.ID)
	}
	if n := server.Unreadable(); n < 4 {
		t.Fatalf("unreadable = %d, want at least 4", n)
	}
	defer func() {
		rawRows(t, `MATCH (k:SealKey) WHERE k.id ENDS WITH $suffix DELETE k`, map[string]any{"suffix": suffix})
	}()

	hyper := membrane.NewContextWithTrust(t.Context(), trustAt(membrane.SensitivityHyper, scope))
	page, err := server.FindRecords(hyper, membrane.RecordFilter{Scopes: []string{scope}}, membrane.DefaultRecordOrder, membrane.Page{First: 100})
	if err != nil {
		t.Fatalf("records page with unreadable records: %v", err)
	}
	redacted := map[string]bool{}
	for _, r := range page.Items {
		redacted[r.ID] = r.Redacted
		if r.Redacted && r.Payload != nil {
			t.Fatalf("redacted record %s has a payload", r.ID)
		}
	}
	for id, want := range map[string]bool{lostEntity[0]: true, lostFact: true, changedFact: true, readable: false, plain: false} {
		got, ok := redacted[id]
		if !ok || got != want {
			t.Fatalf("record %s: listed %v, redacted %v; want listed, redacted %v", id, ok, got, want)
		}
	}
	r, err := server.FindRecordByID(hyper, lostFact)
	if err != nil || !r.Redacted {
		t.Fatalf("record(lost): %+v, %v; want it redacted", r, err)
	}
	// Its audit entries (rationale sealed) come back redacted, in a page
	// and per record, never as an error.
	audits, err := server.FindAuditEntries(hyper, membrane.AuditFilter{RecordID: &lostFact}, membrane.Page{First: 10})
	if err != nil || len(audits.Items) != 1 || audits.Items[0].Rationale != "" || audits.Items[0].RecordID != lostFact {
		t.Fatalf("auditLog(lost): %+v, %v; want its one entry, redacted", audits, err)
	}
	perRecord, err := server.AuditPagesForRecords(hyper, []string{lostFact, readable}, "", membrane.Page{First: 10})
	if err != nil || len(perRecord[lostFact].Items) != 1 || perRecord[readable].Items[0].Rationale == "" {
		t.Fatalf("Record.auditLog: %+v, %v", perRecord, err)
	}
	low := membrane.NewContextWithTrust(t.Context(), trustAt(membrane.SensitivityLow, scope))
	if _, err := server.FindRecordByID(low, lostFact); membrane.ErrorCode(err) != membrane.ENOTFOUND {
		t.Fatalf("record(lost) for a low reader: %v, want NOT_FOUND", err)
	}
	// Retrieve by text, and browsing (no query: the newest records, the
	// unreadable ones among them), leave the unreadable records out.
	for _, q := range []string{"lighthouse harbour", ""} {
		got, _ := retrieveAs(t, server, trustAt(membrane.SensitivityHyper, scope), q, time.Now().Add(time.Minute))
		if !slices.Contains(got, readable) || slices.Contains(got, changedFact) || slices.Contains(got, lostFact) {
			t.Fatalf("retrieve %q: %v, want %s among the hits and neither %s nor %s", q, got, readable, changedFact, lostFact)
		}
	}
}

// resealSetup returns a key to retire and its successor (their bytes
// repeated, under ids no other test uses), a system context, a scope of
// the test's own and a store sealing with the old key. The scope's records
// end sealed with keys no other test has, so they are deleted when the test
// ends: unscoped reads by other tests never meet them.
func resealSetup(t *testing.T, oldByte, newByte byte) (oldKey, newKey membrane.SealKey, ctx context.Context, scope string, before *neo4j.DB) {
	t.Helper()
	neo4jtest.DB(t) // the schema, and a clear failure when NEO4J_URI is unset
	suffix := membrane.NewID()
	oldKey = neo4jtest.SealKey("old-"+suffix, oldByte)
	newKey = neo4jtest.SealKey("new-"+suffix, newByte)
	ctx = membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	scope = neo4jtest.Scope(t)
	before = neo4jtest.OpenSealing(t, []membrane.SealKey{oldKey}, oldKey.ID)
	neo4jtest.DeleteAtEnd(t, before, scope)
	return oldKey, newKey, ctx, scope, before
}

func TestResealRetiresAKey(t *testing.T) {
	oldKey, newKey, ctx, scope, before := resealSetup(t, 7, 9)
	hi := membrane.SensitivityHigh
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &hi}, Subject: "vault", Predicate: "holds", Object: "the secret"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
		t.Fatal(err)
	}
	id := ing.Record.ID

	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	// Without the old key the record is served redacted (docs/operations.md,
	// "Unknown keys"), its payload never opened.
	if r, err := newOnly.FindRecordByID(ctx, id); err != nil || !r.Redacted || r.Payload != nil {
		t.Fatalf("a record sealed with the old key, without it: %+v, %v; want it redacted", r, err)
	}
	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	if _, err := rotated.Reseal(ctx, newKey.ID); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("resealing the active key: %v", err)
	}
	res, err := rotated.Reseal(ctx, oldKey.ID)
	if err != nil || res != (neo4j.ResealResult{Records: 1, Audits: 1}) {
		t.Fatalf("reseal = %+v, %v", res, err)
	}
	r, err := newOnly.FindRecordByID(ctx, id)
	if err != nil || r.Payload.(*membrane.SemanticPayload).Object != "the secret" {
		t.Fatalf("after reseal, with the new key only: %+v, %v", r, err)
	}
	page, err := newOnly.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &id}, membrane.Page{First: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Rationale != "Ingested observation from agent" {
		t.Fatalf("audit after reseal: %+v, %v", page, err)
	}
	if res, err = rotated.Reseal(ctx, oldKey.ID); res != (neo4j.ResealResult{}) || err != nil {
		t.Fatalf("second reseal = %+v, %v", res, err)
	}
}

// TestResealSkipsWhatDoesNotOpen: a record or an audit entry whose value
// under the retired key does not open (damaged, or sealed with other
// material under the same id) is skipped and counted, and stays as it is;
// every other one is resealed. Before, the first such value stopped the
// reseal, and everything after it stayed under the key being retired.
func TestResealSkipsWhatDoesNotOpen(t *testing.T) {
	oldKey, newKey, ctx, scope, before := resealSetup(t, 3, 4)
	hi := membrane.SensitivityHigh
	var ids []string
	for _, obj := range []string{"the first secret", "the second secret", "the third secret"} {
		ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
			IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &hi}, Subject: "vault", Predicate: "holds", Object: obj}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ing.Record.ID)
	}
	// The first record's payload and the second's audit rationale no
	// longer open under the old key (they authenticate under none).
	damaged := "mbx1:" + oldKey.ID + ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	raw(t, `MATCH (m:Memory {id: $id}) SET m.payload = $v`, map[string]any{"id": ids[0], "v": damaged})
	raw(t, `MATCH (a:AuditEntry {recordId: $id}) SET a.rationale = $v`, map[string]any{"id": ids[1], "v": damaged})

	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	want := neo4j.ResealResult{Records: 2, Audits: 2, SkippedRecords: 1, SkippedAudits: 1}
	if res, err := rotated.Reseal(ctx, oldKey.ID); err != nil || res != want {
		t.Fatalf("reseal = %+v, %v; want %+v", res, err, want)
	}
	// What opened is under the new key; what did not is as it was.
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	for i, obj := range []string{"", "the second secret", "the third secret"} {
		r, err := newOnly.FindRecordByID(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if p := raw(t, `MATCH (m:Memory {id: $id}) RETURN m.payload`, map[string]any{"id": ids[0]}); p[0].Values[0] != damaged || !r.Redacted {
				t.Fatalf("the skipped record: payload %v, redacted %v; want it as it was", p[0].Values[0], r.Redacted)
			}
			continue
		}
		if r.Redacted || r.Payload.(*membrane.SemanticPayload).Object != obj {
			t.Fatalf("record %d after the reseal, new key only: %+v", i, r)
		}
	}
	if p := raw(t, `MATCH (a:AuditEntry {recordId: $id}) RETURN a.rationale`, map[string]any{"id": ids[1]}); p[0].Values[0] != damaged {
		t.Fatalf("the skipped audit entry: rationale %v, want it as it was", p[0].Values[0])
	}
	// A second reseal finds only what it skipped, and skips it again.
	want = neo4j.ResealResult{SkippedRecords: 1, SkippedAudits: 1}
	if res, err := rotated.Reseal(ctx, oldKey.ID); err != nil || res != want {
		t.Fatalf("second reseal = %+v, %v; want %+v", res, err, want)
	}
}
