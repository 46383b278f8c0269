package membrane_test

import (
	"context"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

// trustOf returns the trust of a principal of role in scope "alpha" with
// ceiling max.
func svcTrust(t *testing.T, role membrane.Role, max membrane.Sensitivity) membrane.Trust {
	t.Helper()
	tr, err := membrane.NewTrust(membrane.Principal{Actor: "actor-" + string(role), Role: role, MaxSensitivity: max, Scopes: []string{"alpha"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func svcRecord(id string, sens membrane.Sensitivity, scope string) *membrane.Record {
	return &membrane.Record{ID: id, Sensitivity: sens, Scope: scope}
}

func TestRequestIdempotency(t *testing.T) {
	writer := svcTrust(t, membrane.RoleWriter, membrane.SensitivityMedium)
	other := writer
	other.Principal.Actor = "someone-else"
	key := func(s string) *string { return &s }
	tests := []struct {
		name    string
		trust   membrane.Trust
		key     *string
		ids     []string
		code    string
		nilIdem bool
		implied bool
		prefix  string
	}{
		{name: "no key, no chosen id: none", trust: writer, nilIdem: true},
		{name: "no key, empty chosen id: none", trust: writer, ids: []string{""}, nilIdem: true},
		{name: "no key, chosen id: implied by the principal and id", trust: writer, ids: []string{"id-1"}, implied: true, prefix: "\x00ids\x00" + writer.Principal.Actor + "\x00"},
		{name: "key: namespaced by the principal", trust: writer, key: key("k"), prefix: writer.Principal.Actor + "\x00"},
		{name: "key wins over chosen ids", trust: writer, key: key("k"), ids: []string{"id-1"}, prefix: writer.Principal.Actor + "\x00"},
		{name: "another principal's key", trust: other, key: key("k"), prefix: "someone-else\x00"},
		{name: "empty key", trust: writer, key: key(""), code: membrane.EINVALID},
		{name: "key over 256 bytes", trust: writer, key: key(strings.Repeat("k", 257)), code: membrane.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idem, err := membrane.RequestIdempotency(tc.trust, tc.key, "op", map[string]any{"a": 1}, tc.ids...)
			if membrane.ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Fatalf("err = %v, want code %q", err, tc.code)
			}
			if tc.code != "" {
				return
			}
			if tc.nilIdem {
				if idem != nil {
					t.Fatalf("idempotency %+v, want none", idem)
				}
				return
			}
			if idem == nil || idem.Implied != tc.implied || !strings.HasPrefix(idem.Key, tc.prefix) || idem.Operation != "op" && !tc.implied {
				t.Fatalf("idempotency %+v, want implied=%v key prefix %q", idem, tc.implied, tc.prefix)
			}
			same, _ := membrane.RequestIdempotency(tc.trust, tc.key, "op", map[string]any{"a": 1}, tc.ids...)
			changed, _ := membrane.RequestIdempotency(tc.trust, tc.key, "op", map[string]any{"a": 2}, tc.ids...)
			if same.Key != idem.Key || same.Fingerprint != idem.Fingerprint || changed.Fingerprint == idem.Fingerprint {
				t.Fatalf("fingerprints: %q, same request %q, other request %q", idem.Fingerprint, same.Fingerprint, changed.Fingerprint)
			}
		})
	}
	a, _ := membrane.RequestIdempotency(writer, key("k"), "op", nil)
	b, _ := membrane.RequestIdempotency(other, key("k"), "op", nil)
	if a.Key == b.Key {
		t.Fatalf("two principals' keys collide: %q", a.Key)
	}
}

func TestGuardPlan(t *testing.T) {
	writer := svcTrust(t, membrane.RoleWriter, membrane.SensitivityLow)
	reader := svcTrust(t, membrane.RoleReader, membrane.SensitivityLow)
	low, medium, high := membrane.SensitivityLow, membrane.SensitivityMedium, membrane.SensitivityHigh
	tests := []struct {
		name    string
		trust   membrane.Trust
		locked  *membrane.Record
		read    *membrane.Record
		creates *membrane.Record
		code    string
		// planned is whether the plan ran; readSeen whether it saw read.
		planned, readSeen bool
	}{
		{name: "all within trust", trust: writer, locked: svcRecord("l", low, "alpha"), read: svcRecord("r", low, "alpha"), creates: svcRecord("c", low, "alpha"), planned: true, readSeen: true},
		{name: "a reader revises nothing", trust: reader, locked: svcRecord("l", low, "alpha"), code: membrane.EFORBIDDEN},
		{name: "locked record redacted", trust: writer, locked: svcRecord("l", medium, "alpha"), code: membrane.EFORBIDDEN},
		{name: "locked record invisible", trust: writer, locked: svcRecord("l", high, "alpha"), code: membrane.ENOTFOUND},
		{name: "locked record out of scope", trust: writer, locked: svcRecord("l", low, "beta"), code: membrane.ENOTFOUND},
		{name: "read record redacted", trust: writer, locked: svcRecord("l", low, "alpha"), read: svcRecord("r", medium, "alpha"), code: membrane.EFORBIDDEN},
		{name: "read record invisible counts as missing", trust: writer, locked: svcRecord("l", low, "alpha"), read: svcRecord("r", high, "alpha"), planned: true},
		{name: "created record above the ceiling", trust: writer, locked: svcRecord("l", low, "alpha"), creates: svcRecord("c", medium, "alpha"), planned: true, code: membrane.EFORBIDDEN},
		{name: "created record out of scope", trust: writer, locked: svcRecord("l", low, "alpha"), creates: svcRecord("c", low, "beta"), planned: true, code: membrane.EFORBIDDEN},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			locked := map[string]*membrane.Record{tc.locked.ID: tc.locked}
			read := map[string]*membrane.Record{}
			if tc.read != nil {
				read[tc.read.ID] = tc.read
			}
			var planned, readSeen bool
			plan := tc.trust.GuardPlan([]string{tc.locked.ID}, func(_, read map[string]*membrane.Record) (*membrane.Change, error) {
				planned = true
				readSeen = tc.read != nil && read[tc.read.ID] != nil
				c := &membrane.Change{Result: tc.locked}
				if tc.creates != nil {
					c.Creates = []*membrane.Record{tc.creates}
				}
				return c, nil
			})
			c, err := plan(locked, read)
			if membrane.ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Fatalf("err = %v, want code %q", err, tc.code)
			}
			if (tc.code == "") != (c != nil) || planned != tc.planned || readSeen != tc.readSeen {
				t.Fatalf("change %+v, planned %v (want %v), read seen %v (want %v)", c, planned, tc.planned, readSeen, tc.readSeen)
			}
		})
	}
}

func TestReplayEdges(t *testing.T) {
	tr := svcTrust(t, membrane.RoleWriter, membrane.SensitivityLow)
	low, medium, high := membrane.SensitivityLow, membrane.SensitivityMedium, membrane.SensitivityHigh
	ends := map[string]*membrane.Record{
		"src":       svcRecord("src", low, "alpha"),
		"visible":   svcRecord("visible", low, "alpha"),
		"redacted":  svcRecord("redacted", medium, "alpha"),
		"invisible": svcRecord("invisible", high, "alpha"),
		"elsewhere": svcRecord("elsewhere", low, "beta"),
	}
	tests := []struct {
		target string
		kept   bool
	}{
		{"visible", true},
		{"redacted", true}, // as a read of relations shows it
		{"invisible", false},
		{"elsewhere", false},
		{"deleted", false}, // absent from ends
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			edges := []membrane.Relation{
				{Predicate: membrane.PredMentions, SourceID: "src", TargetID: tc.target},
				{Predicate: membrane.PredAbout, SourceID: tc.target, TargetID: "src"},
			}
			got := tr.ReplayEdges(edges, ends)
			if want := map[bool]int{true: 2, false: 0}[tc.kept]; len(got) != want {
				t.Fatalf("kept %+v, want %d edges", got, want)
			}
		})
	}
	if got := tr.ReplayEdges(nil, ends); got == nil || len(got) != 0 {
		t.Fatalf("no edges replay as %#v, want an empty list", got)
	}
}

// TestServicesRefuseBeforeTheStore: the decisions a service makes before
// any store is reached: the role, and a store the server runs without.
func TestServicesRefuseBeforeTheStore(t *testing.T) {
	s := membrane.NewServices(membrane.Stores{}, membrane.ServiceOptions{Policy: membrane.DefaultPolicy()})
	admin := svcTrust(t, membrane.RoleAdmin, membrane.SensitivityHyper)
	writer := svcTrust(t, membrane.RoleWriter, membrane.SensitivityHyper)
	reader := svcTrust(t, membrane.RoleReader, membrane.SensitivityHyper)
	job := membrane.JobName("prune")
	calls := map[string]func(ctx context.Context) error{
		"runJob": func(ctx context.Context) error { _, err := s.Jobs.RunJob(ctx, job); return err },
		"jobRuns": func(ctx context.Context) error {
			_, err := s.Jobs.JobRuns(ctx, nil, nil, nil)
			return err
		},
		"deleteRecord": func(ctx context.Context) error { _, err := s.Delete.DeleteRecord(ctx, "id", nil, nil); return err },
		"metrics":      func(ctx context.Context) error { _, err := s.Read.Metrics(ctx, nil); return err },
		"changeCursor": func(ctx context.Context) error { _, err := s.Read.ChangeCursor(ctx); return err },
		"createRecord": func(ctx context.Context) error {
			_, err := s.Ingest.CreateRecord(ctx, membrane.RecordInput{}, nil, nil)
			return err
		},
		"captureMemory": func(ctx context.Context) error {
			_, err := s.Capture.Capture(ctx, membrane.CaptureInput{}, nil)
			return err
		},
		"retract": func(ctx context.Context) error {
			_, err := s.Revise.Retract(ctx, "id", membrane.RevisionArgs{})
			return err
		},
		"addRelation": func(ctx context.Context) error {
			_, err := s.Relate.AddRelation(ctx, "a", membrane.PredSupports, "b", nil, membrane.RevisionArgs{})
			return err
		},
		"recordOutcome": func(ctx context.Context) error {
			_, err := s.Outcomes.RecordOutcome(ctx, "id", membrane.OutcomeSuccess, membrane.RevisionArgs{})
			return err
		},
	}
	tests := []struct {
		call  string
		trust membrane.Trust
		code  string
	}{
		{"runJob", writer, membrane.EFORBIDDEN},
		{"runJob", admin, membrane.ENOTIMPLEMENTED},
		{"jobRuns", reader, membrane.EFORBIDDEN},
		{"jobRuns", admin, membrane.ENOTIMPLEMENTED},
		{"deleteRecord", writer, membrane.EFORBIDDEN},
		{"deleteRecord", admin, membrane.ENOTIMPLEMENTED},
		{"metrics", reader, membrane.ENOTIMPLEMENTED},
		{"changeCursor", reader, membrane.ENOTIMPLEMENTED},
		{"createRecord", reader, membrane.EFORBIDDEN},
		{"captureMemory", reader, membrane.EFORBIDDEN},
		{"retract", reader, membrane.EFORBIDDEN},
		{"addRelation", reader, membrane.EFORBIDDEN},
		{"recordOutcome", reader, membrane.EFORBIDDEN},
	}
	for _, tc := range tests {
		t.Run(tc.call+" by "+string(tc.trust.Principal.Role), func(t *testing.T) {
			err := calls[tc.call](membrane.NewContextWithTrust(t.Context(), tc.trust))
			if membrane.ErrorCode(err) != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
		})
	}
}
