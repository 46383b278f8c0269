package membrane_test

import (
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestTrustVisibility(t *testing.T) {
	p := membrane.Principal{Actor: "a", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{"alpha"}}
	tr, err := membrane.NewTrust(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sens  membrane.Sensitivity
		scope string
		want  membrane.Visibility
	}{
		{membrane.SensitivityLow, "alpha", membrane.Visible},
		{membrane.SensitivityMedium, "alpha", membrane.Visible},
		{membrane.SensitivityHigh, "alpha", membrane.Redacted},
		{membrane.SensitivityHyper, "alpha", membrane.Invisible},
		{membrane.SensitivityLow, "beta", membrane.Invisible},
		{membrane.SensitivityHigh, "beta", membrane.Invisible},
		{membrane.SensitivityMedium, "", membrane.Visible},
		{membrane.SensitivityHigh, "", membrane.Redacted},
		{"bogus", "alpha", membrane.Invisible},
	}
	for _, tt := range tests {
		r := &membrane.Record{ID: "r", Sensitivity: tt.sens, Scope: tt.scope}
		if got := tr.Visibility(r); got != tt.want {
			t.Errorf("%s in %q: visibility %d, want %d", tt.sens, tt.scope, got, tt.want)
		}
	}
}

func TestTrustNarrowing(t *testing.T) {
	p := membrane.Principal{Actor: "a", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHigh, Scopes: []string{"alpha", "beta"}}
	low := membrane.SensitivityLow
	hyper := membrane.SensitivityHyper
	tr, err := membrane.NewTrust(p, &low, []string{"beta"})
	if err != nil || tr.Ceiling != 1 || tr.All || len(tr.Scopes) != 1 || tr.Scopes[0] != "beta" {
		t.Fatalf("narrowed = %+v, %v", tr, err)
	}
	for name, f := range map[string]func() error{
		"higher ceiling": func() error { _, err := membrane.NewTrust(p, &hyper, nil); return err },
		"other scope":    func() error { _, err := membrane.NewTrust(p, nil, []string{"gamma"}); return err },
		"all scopes":     func() error { _, err := membrane.NewTrust(p, nil, []string{"*"}); return err },
	} {
		if err := f(); membrane.ErrorCode(err) != membrane.EFORBIDDEN {
			t.Errorf("%s: err = %v, want FORBIDDEN", name, err)
		}
	}
	admin := membrane.Principal{Actor: "root", Role: membrane.RoleAdmin, MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{"*"}}
	tr, err = membrane.NewTrust(admin, nil, []string{"alpha"})
	if err != nil || tr.All || tr.Scopes[0] != "alpha" {
		t.Fatalf("admin narrowed to alpha = %+v, %v", tr, err)
	}
}

func TestTrustWrites(t *testing.T) {
	reader, _ := membrane.NewTrust(membrane.Principal{Actor: "r", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{"*"}}, nil, nil)
	writer, _ := membrane.NewTrust(membrane.Principal{Actor: "w", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{"alpha"}}, nil, nil)
	rec := func(s membrane.Sensitivity, scope string) *membrane.Record {
		return &membrane.Record{ID: "x", Sensitivity: s, Scope: scope}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"reader creates", reader.CanCreate(rec(membrane.SensitivityLow, "")), membrane.EFORBIDDEN},
		{"writer creates at ceiling", writer.CanCreate(rec(membrane.SensitivityMedium, "alpha")), ""},
		{"writer creates above ceiling", writer.CanCreate(rec(membrane.SensitivityHigh, "alpha")), membrane.EFORBIDDEN},
		{"writer creates outside scope", writer.CanCreate(rec(membrane.SensitivityLow, "beta")), membrane.EFORBIDDEN},
		{"writer creates unscoped", writer.CanCreate(rec(membrane.SensitivityLow, "")), ""},
		{"writer revises visible", writer.CanRevise(rec(membrane.SensitivityLow, "alpha")), ""},
		{"writer revises redacted", writer.CanRevise(rec(membrane.SensitivityHigh, "alpha")), membrane.EFORBIDDEN},
		{"writer revises invisible", writer.CanRevise(rec(membrane.SensitivityHyper, "alpha")), membrane.ENOTFOUND},
		{"writer revises out of scope", writer.CanRevise(rec(membrane.SensitivityLow, "beta")), membrane.ENOTFOUND},
		{"reader revises", reader.CanRevise(rec(membrane.SensitivityLow, "")), membrane.EFORBIDDEN},
	}
	for _, tt := range tests {
		if got := membrane.ErrorCode(tt.err); got != tt.want {
			t.Errorf("%s: code %q, want %q", tt.name, got, tt.want)
		}
	}
	if r := membrane.Redact(&membrane.Record{ID: "x", Payload: &membrane.SemanticPayload{}, Tags: []string{"t"}}); r.Payload != nil || !r.Redacted || r.Tags[0] != "t" {
		t.Fatalf("redacted = %+v", r)
	}
}
