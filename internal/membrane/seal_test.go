package membrane_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestSealer(t *testing.T) {
	k1 := membrane.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, 32)}
	k2 := membrane.SealKey{ID: "k2", Key: bytes.Repeat([]byte{2}, 32)}
	old, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{k1}, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if !old.Required(membrane.SensitivityHigh) || !old.Required(membrane.SensitivityHyper) || old.Required(membrane.SensitivityMedium) {
		t.Fatal("threshold")
	}
	sealed, err := old.Seal([]byte("the launch code"), "rec-1/payload")
	if err != nil || !membrane.IsSealed(sealed) || strings.Contains(sealed, "launch") {
		t.Fatalf("sealed = %q, %v", sealed, err)
	}
	again, _ := old.Seal([]byte("the launch code"), "rec-1/payload")
	if again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	// After rotation to k2, values sealed with k1 still open.
	rotated, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{k1, k2}, "k2")
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := rotated.Open(sealed, "rec-1/payload"); err != nil || string(plain) != "the launch code" {
		t.Fatalf("open after rotation = %q, %v", plain, err)
	}
	if s2, _ := rotated.Seal([]byte("x"), "c"); !strings.HasPrefix(s2, "mbx1:k2:") {
		t.Fatalf("new values use the active key: %q", s2)
	}
	tests := []struct {
		name   string
		sealer *membrane.Sealer
		value  string
		ctx    string
	}{
		{"other record", rotated, sealed, "rec-2/payload"},
		{"other field", rotated, sealed, "rec-1/provenance"},
		{"tampered", rotated, sealed[:len(sealed)-2] + "AA", "rec-1/payload"},
		{"unknown key", mustSealer(t, []membrane.SealKey{k2}, "k2"), sealed, "rec-1/payload"},
		{"not sealed", rotated, "plain", "rec-1/payload"},
	}
	for _, tt := range tests {
		if _, err := tt.sealer.Open(tt.value, tt.ctx); err == nil {
			t.Errorf("%s: opened", tt.name)
		}
	}
	none, _ := membrane.NewSealer(membrane.SensitivityHigh, nil, "")
	if _, err := none.Seal([]byte("x"), "c"); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("sealing without a key: %v", err)
	}
	for name, keys := range map[string][]membrane.SealKey{"short key": {{ID: "a", Key: []byte("short")}}, "colon in id": {{ID: "a:b", Key: k1.Key}}} {
		if _, err := membrane.NewSealer(membrane.SensitivityHigh, keys, keys[0].ID); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{k1}, "k9"); err == nil {
		t.Error("an active key that is not configured was accepted")
	}
}

func mustSealer(t *testing.T, keys []membrane.SealKey, active string) *membrane.Sealer {
	t.Helper()
	s, err := membrane.NewSealer(membrane.SensitivityHigh, keys, active)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
