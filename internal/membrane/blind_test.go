package membrane_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

// spec computes a token the way docs/security.md states it, independently
// of the implementation: hex(HMAC(HMAC(key, label), term)[:16]).
func spec(key []byte, term string) string {
	k := hmac.New(sha256.New, key)
	k.Write([]byte("membrane blind index v1"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(term))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

func TestBlindToken(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	hexTok := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		name string
		key  []byte
		term string
	}{
		{"word", k1, "databas"},
		{"same word, other key", k2, "databas"},
		{"identifier", k1, "max_connections"},
		{"non-ascii", k1, "café"},
		{"empty", k1, ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := membrane.BlindToken(membrane.BlindKey(tt.key), tt.term)
			if got != spec(tt.key, tt.term) {
				t.Fatalf("token %s, want %s (the documented derivation)", got, spec(tt.key, tt.term))
			}
			if !hexTok.MatchString(got) {
				t.Fatalf("token %q is not 32 lower-case hex digits (Lucene-safe)", got)
			}
			if prev, dup := seen[got]; dup {
				t.Fatalf("token of %q equals that of %s", tt.name, prev)
			}
			seen[got] = tt.name
			if again := membrane.BlindToken(membrane.BlindKey(tt.key), tt.term); again != got {
				t.Fatal("token is not deterministic: a query could never match")
			}
		})
	}
	if bytes.Equal(membrane.BlindKey(k1), k1) || bytes.Equal(membrane.BlindKey(k1), membrane.BlindKey(k2)) {
		t.Fatal("blind keys must be derived, one per encryption key")
	}
}

func TestBlindDocument(t *testing.T) {
	k := membrane.BlindKey(bytes.Repeat([]byte{3}, 32))
	tests := []struct {
		name  string
		terms []string
	}{
		{"repeats kept", []string{"vault", "secret", "vault"}},
		{"order hidden", []string{"secret", "vault", "vault"}},
		{"one term", []string{"vault"}},
		{"none", nil},
	}
	docs := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := membrane.BlindDocument(k, tt.terms)
			docs[tt.name] = doc
			toks := strings.Fields(doc)
			if len(toks) != len(tt.terms) {
				t.Fatalf("%d tokens for %d terms: term frequency must be kept", len(toks), len(tt.terms))
			}
			if !slices.IsSorted(toks) {
				t.Fatalf("tokens not sorted: %q", doc)
			}
			for _, term := range tt.terms {
				if strings.Contains(doc, term) {
					t.Fatalf("plaintext %q in %q", term, doc)
				}
				if !slices.Contains(toks, membrane.BlindToken(k, term)) {
					t.Fatalf("token of %q missing", term)
				}
			}
		})
	}
	if docs["repeats kept"] != docs["order hidden"] {
		t.Fatal("the same terms in another order give another document: it keeps word order")
	}
}

func TestSealerBlind(t *testing.T) {
	old := membrane.SealKey{ID: "k1", Key: bytes.Repeat([]byte{4}, 32)}
	cur := membrane.SealKey{ID: "k2", Key: bytes.Repeat([]byte{5}, 32)}
	terms := []string{"vault", "secret"}
	tests := []struct {
		name       string
		keys       []membrane.SealKey
		active     string
		wantKey    string
		wantQuery  []string
		searchable map[membrane.Sensitivity]bool
	}{
		{"no key", nil, "", "", nil,
			map[membrane.Sensitivity]bool{membrane.SensitivityMedium: false, membrane.SensitivityHyper: false}},
		{"one key", []membrane.SealKey{cur}, "k2", "k2",
			[]string{spec(cur.Key, "vault"), spec(cur.Key, "secret")},
			map[membrane.Sensitivity]bool{membrane.SensitivityMedium: false, membrane.SensitivityHigh: true, membrane.SensitivityHyper: true}},
		{"rotation: active first, old still queried", []membrane.SealKey{old, cur}, "k2", "k2",
			[]string{spec(cur.Key, "vault"), spec(cur.Key, "secret"), spec(old.Key, "vault"), spec(old.Key, "secret")},
			map[membrane.Sensitivity]bool{membrane.SensitivityLow: false, membrane.SensitivityHigh: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := membrane.NewSealer(membrane.SensitivityHigh, tt.keys, tt.active)
			if err != nil {
				t.Fatal(err)
			}
			doc, id, ok := s.BlindTerms(terms)
			if ok != (tt.wantKey != "") || id != tt.wantKey {
				t.Fatalf("BlindTerms key = %q, %v; want %q", id, ok, tt.wantKey)
			}
			if ok && doc != membrane.BlindDocument(membrane.BlindKey(cur.Key), terms) {
				t.Fatalf("blind terms not under the active key: %q", doc)
			}
			if _, _, ok := s.BlindTerms(nil); ok {
				t.Fatal("blind terms for no terms")
			}
			if got := s.BlindQuery(terms); !slices.Equal(got, tt.wantQuery) {
				t.Fatalf("BlindQuery = %q, want %q", got, tt.wantQuery)
			}
			for sens, want := range tt.searchable {
				if got := s.Searchable(sens.Level()); got != want {
					t.Errorf("Searchable(%s) = %v, want %v", sens, got, want)
				}
			}
		})
	}
}
