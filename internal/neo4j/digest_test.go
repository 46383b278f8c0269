package neo4j_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

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
	suffix := membrane.NewID()
	oldKey := neo4jtest.SealKey("dold-"+suffix, 41)
	newKey := neo4jtest.SealKey("dnew-"+suffix, 42)
	scope, before := neo4jtest.SealedScope(t, []membrane.SealKey{oldKey}, oldKey.ID)
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
