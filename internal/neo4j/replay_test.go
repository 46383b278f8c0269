package neo4j_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestReplayNeedsFullView: a retried create with a chosen id answers with
// the record it created only to a request of the same principal that sees
// it in full. Narrowed below the record's level (it would see it redacted)
// or out of its scope, the retry gets the CONFLICT of any taken id: not the
// record, nor its redaction.
func TestReplayNeedsFullView(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	p := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	in := fact(scope, "replayed", 0.5, nil)
	in.ID, in.Sensitivity = ptr(membrane.NewID()), ptr(membrane.SensitivityMedium)
	idem := membrane.ImpliedIdempotency(p.Actor, "createRecord", in, []string{*in.ID})
	createAs := func(maxSensitivity *membrane.Sensitivity, scopes []string) ([]*membrane.Record, error) {
		t.Helper()
		trust, err := membrane.NewTrust(p, maxSensitivity, scopes)
		if err != nil {
			t.Fatal(err)
		}
		r, err := membrane.DefaultPolicy().BuildRecord(in, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return db.CreateRecords(membrane.NewContextWithTrust(t.Context(), trust), idem,
			[]*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, p.Actor, "", time.Now())}})
	}
	for _, attempt := range []string{"first", "retry"} {
		recs, err := createAs(nil, nil)
		if err != nil || len(recs) != 1 || recs[0].ID != *in.ID || recs[0].Redacted {
			t.Fatalf("%s: %v %+v, want the record", attempt, err, recs)
		}
	}
	tests := []struct {
		name   string
		max    *membrane.Sensitivity
		scopes []string
	}{
		{"below its level", ptr(membrane.SensitivityLow), nil},
		{"out of its scope", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := createAs(tc.max, tc.scopes)
			if membrane.ErrorCode(err) != membrane.ECONFLICT || membrane.ErrorMessage(err) != membrane.IDTaken || recs != nil {
				t.Fatalf("narrowed retry: %v %+v, want the CONFLICT of a taken id", err, recs)
			}
		})
	}
}
