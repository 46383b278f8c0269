package membrane_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestLegacyRationale(t *testing.T) {
	ref := func(role membrane.AuditRefRole, id string, pred ...membrane.Predicate) membrane.AuditRef {
		r := membrane.AuditRef{Role: role, RecordID: id}
		if len(pred) > 0 {
			r.Pred = pred[0]
		}
		return r
	}
	for _, tc := range []struct {
		action membrane.AuditAction
		in     string
		words  string
		refs   []membrane.AuditRef
	}{
		{membrane.AuditSupersede, "superseded by n1", "", []membrane.AuditRef{ref(membrane.RefSupersededBy, "n1")}},
		{membrane.AuditSupersede, "superseded by n1: newer: really", "newer: really", []membrane.AuditRef{ref(membrane.RefSupersededBy, "n1")}},
		{membrane.AuditCreate, "supersedes o1: why", "why", []membrane.AuditRef{ref(membrane.RefSupersedes, "o1")}},
		{membrane.AuditFork, "forked to f1", "", []membrane.AuditRef{ref(membrane.RefForkedTo, "f1")}},
		{membrane.AuditCreate, "forked from s1: linux", "linux", []membrane.AuditRef{ref(membrane.RefForkedFrom, "s1")}},
		{membrane.AuditCreate, "merged from a, b, c: same", "same", []membrane.AuditRef{ref(membrane.RefMergedFrom, "a"), ref(membrane.RefMergedFrom, "b"), ref(membrane.RefMergedFrom, "c")}},
		{membrane.AuditMerge, "merged into m", "", []membrane.AuditRef{ref(membrane.RefMergedInto, "m")}},
		{membrane.AuditContest, "contests r1: another caller's words", "", []membrane.AuditRef{ref(membrane.RefContests, "r1")}},
		{membrane.AuditContest, "contested by x1: disagree", "disagree", []membrane.AuditRef{ref(membrane.RefContestedBy, "x1")}},
		{membrane.AuditContest, "contested by external reference https://x: see", "contested by external reference https://x: see", nil},
		{membrane.AuditRelate, "supports t1: because", "because", []membrane.AuditRef{ref(membrane.RefRelatedTo, "t1", membrane.PredSupports)}},
		{membrane.AuditRelate, "supports my id: because", "because", []membrane.AuditRef{ref(membrane.RefRelatedTo, "my id", membrane.PredSupports)}},
		{membrane.AuditRelate, "t1 is the target of supports from s1: because", "", []membrane.AuditRef{ref(membrane.RefRelatedFrom, "s1", membrane.PredSupports)}},
		{membrane.AuditReinforce, "reinforced: supported by episode e1", "reinforced: supported by an episode", []membrane.AuditRef{ref(membrane.RefSupportedBy, "e1")}},
		{membrane.AuditCreate, "extracted from successful episode e1", "extracted from a successful episode", []membrane.AuditRef{ref(membrane.RefDerivedFrom, "e1")}},
		{membrane.AuditCreate, "plan of 3 steps extracted from episode e1", "plan of 3 steps extracted from an episode", []membrane.AuditRef{ref(membrane.RefDerivedFrom, "e1")}},
		{membrane.AuditCreate, "Entity mentioned by capture c1", "Entity mentioned by a capture", []membrane.AuditRef{ref(membrane.RefDerivedFrom, "c1")}},
		{membrane.AuditCreate, "Fact derived from capture c1", "Fact derived from a capture", []membrane.AuditRef{ref(membrane.RefDerivedFrom, "c1")}},
		// Texts that name no record stay as they are.
		{membrane.AuditCreate, "Ingested observation from agent", "Ingested observation from agent", nil},
		{membrane.AuditReinforce, "reinforced: good", "reinforced: good", nil},
		{membrane.AuditRetract, "superseded by n1", "superseded by n1", nil},
		{membrane.AuditRelate, "just words here", "just words here", nil},
		{membrane.AuditCreate, "supersedes ", "supersedes ", nil},
	} {
		t.Run(string(tc.action)+" "+tc.in, func(t *testing.T) {
			words, refs, changed := membrane.LegacyRationale(tc.action, tc.in)
			if words != tc.words || fmt.Sprint(refs) != fmt.Sprint(tc.refs) || changed != (tc.refs != nil) {
				t.Fatalf("= %q %v %v, want %q %v", words, refs, changed, tc.words, tc.refs)
			}
		})
	}
}

// TestSettleLegacy: the words parsed out of an old rationale are kept only
// when every id read there names a record; a client-chosen id holding ": ",
// ", " or a space is read short, and none of its pieces may stay.
func TestSettleLegacy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action membrane.AuditAction
		in     string
		known  []string
		want   string
	}{
		{"whole id", membrane.AuditSupersede, "superseded by n1: newer", []string{"n1"}, "newer"},
		{"id holding ': '", membrane.AuditSupersede, "superseded by a: b: words", []string{"a: b"}, ""},
		{"id holding a space, found", membrane.AuditRelate, "supports my id: because", []string{"my id"}, "because"},
		{"id holding a space and ': '", membrane.AuditRelate, "supports my id: because", []string{"my id: because"}, ""},
		{"merged ids holding ', '", membrane.AuditCreate, "merged from a, b, c: same", []string{"a, b", "c"}, ""},
		{"every merged id found", membrane.AuditCreate, "merged from a, b: same", []string{"a", "b"}, "same"},
		{"record and trail gone", membrane.AuditCreate, "forked from s1: linux", nil, ""},
		{"no id", membrane.AuditReinforce, "reinforced: good", nil, "reinforced: good"},
		{"caller's external reference", membrane.AuditContest, "contested by external reference https://x: see", nil,
			"contested by external reference https://x: see"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, refs, _ := membrane.LegacyRationale(tc.action, tc.in)
			var ids []string
			for _, r := range refs {
				ids = append(ids, r.RecordID)
			}
			found := func(id string) bool { return slices.Contains(tc.known, id) }
			if got := membrane.SettleLegacy(words, ids, found); got != tc.want {
				t.Fatalf("%q settles to %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
