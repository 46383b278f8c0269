package membrane_test

import (
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestKeyring(t *testing.T) {
	p := membrane.Principal{Actor: "agent-1", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{"alpha"}}
	k1, err := membrane.NewAPIKey(membrane.HashKey("secret-one"), p)
	if err != nil {
		t.Fatal(err)
	}
	q := p
	q.Actor = "agent-2"
	k2, err := membrane.NewAPIKey("sha256:"+membrane.HashKey("secret-two"), q)
	if err != nil {
		t.Fatal(err)
	}
	ring := membrane.NewKeyring([]membrane.APIKey{k1, k2})
	tests := []struct {
		key   string
		actor string
		ok    bool
	}{
		{"secret-one", "agent-1", true},
		{"secret-two", "agent-2", true},
		{"secret-on", "", false},
		{"", "", false},
		{membrane.HashKey("secret-one"), "", false},
	}
	for _, tt := range tests {
		got, ok := ring.Authenticate(tt.key)
		if ok != tt.ok || got.Actor != tt.actor {
			t.Errorf("Authenticate(%q) = %q, %v", tt.key, got.Actor, ok)
		}
	}
	if ring.Open() || !membrane.NewKeyring(nil).Open() {
		t.Fatal("Open")
	}
	for name, f := range map[string]func() error{
		"short hash": func() error { _, err := membrane.NewAPIKey("abcd", p); return err },
		"no actor": func() error {
			_, err := membrane.NewAPIKey(membrane.HashKey("x"), membrane.Principal{Role: membrane.RoleAdmin, MaxSensitivity: membrane.SensitivityLow})
			return err
		},
		"bad role": func() error {
			_, err := membrane.NewAPIKey(membrane.HashKey("x"), membrane.Principal{Actor: "a", Role: "root", MaxSensitivity: membrane.SensitivityLow})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
