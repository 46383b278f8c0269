package membrane_test

import (
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestRelationID(t *testing.T) {
	for _, tc := range []struct {
		source, target string
		pred           membrane.Predicate
		want           string
	}{
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c", membrane.PredSupersedes,
			"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b|SUPERSEDES|0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"},
		{"a|USES|b", "c", membrane.PredUses, "a%7CUSES%7Cb|USES|c"},
		{"a", "b|USES|c", membrane.PredUses, "a|USES|b%7CUSES%7Cc"},
		{"50%", "%7C", membrane.PredRelatedTo, "50%25|RELATED_TO|%257C"},
	} {
		r := &membrane.Relation{SourceID: tc.source, Predicate: tc.pred, TargetID: tc.target}
		if got := r.ID(); got != tc.want {
			t.Errorf("ID of %s -%s-> %s = %q, want %q", tc.source, tc.pred, tc.target, got, tc.want)
		}
	}
}

func TestCaption(t *testing.T) {
	r := &membrane.Record{ID: "r1", Type: membrane.TypeSemantic, Payload: &membrane.SemanticPayload{Subject: "db", Predicate: "is", Object: "postgres"}}
	if got := r.Caption(); got != "db is postgres" || got != membrane.DisplayName(r) {
		t.Errorf("caption = %q, want the display name %q", got, membrane.DisplayName(r))
	}
	redacted := membrane.Redact(r)
	if got := redacted.Caption(); got != "semantic (redacted)" {
		t.Errorf("redacted caption = %q", got)
	}
}
