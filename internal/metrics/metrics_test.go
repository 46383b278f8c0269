package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/metrics"
)

func TestOperationLabel(t *testing.T) {
	m := metrics.New()
	for i := range metrics.MaxOperationNames - 1 {
		m.OperationLabel(fmt.Sprintf("Op%d", i))
	}
	tests := []struct {
		name, in, want string
	}{
		{"anonymous", "", metrics.Anonymous},
		{"known name", "Op1", "Op1"},
		{"last free slot", "Fresh", "Fresh"},
		{"known again", "Fresh", "Fresh"},
		{"beyond the cap", "OneTooMany", metrics.Other},
		{"not a GraphQL name", "a b", metrics.Other},
		{"leading digit", "1a", metrics.Other},
		{"too long", strings.Repeat("a", 65), metrics.Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.OperationLabel(tt.in); got != tt.want {
				t.Fatalf("OperationLabel(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A nil *Metrics is the disabled state: every method must be a no-op.
func TestNilMetricsRecordNothing(t *testing.T) {
	var m *metrics.Metrics
	m.GraphQLOperation("a", "query", 0)
	m.GraphQLError("X")
	m.HTTPResponse("graphql", 200)
	m.SubscriptionStarted("k")()
	_, end := m.Transaction(context.Background(), "read")
	end(2, "UNAVAILABLE")
	_, done := m.JobRun(context.Background(), "decay")
	done("succeeded")
	if got := m.OperationLabel("Named"); got != metrics.Other {
		t.Fatalf("label of a nil Metrics = %q", got)
	}
}

func TestSubscriptionGauge(t *testing.T) {
	m := metrics.New()
	endA := m.SubscriptionStarted("recordChanged")
	endB := m.SubscriptionStarted("recordChanged")
	tests := []struct {
		name string
		step func()
		want string
	}{
		{"two open", func() {}, "2"},
		{"one ended", endA, "1"},
		{"ending twice counts once", endA, "1"},
		{"none open", endB, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.step()
			line := `membrane_graphql_subscriptions_active{kind="recordChanged"} ` + tt.want
			if body := scrape(t, m); !strings.Contains(body, line+"\n") {
				t.Fatalf("want %q in\n%s", line, body)
			}
		})
	}
}

func TestTransactionRetriesAndErrors(t *testing.T) {
	m := metrics.New()
	_, end := m.Transaction(context.Background(), "write")
	end(3, "UNAVAILABLE")
	_, end = m.Transaction(context.Background(), "write")
	end(1, "")
	body := scrape(t, m)
	for _, want := range []string{
		`membrane_neo4j_transaction_retries_total{mode="write"} 2`,
		`membrane_neo4j_transaction_errors_total{code="UNAVAILABLE",mode="write"} 1`,
		`membrane_neo4j_transaction_duration_seconds_count{mode="write"} 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("want %q", want)
		}
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestRecordsUnreadableGauge: the count of sealed records the server
// cannot open, set at start, is scraped from the registry as
// membrane_records_unreadable, and its help says what the code does with
// them (shown redacted, never "left out of reads").
func TestRecordsUnreadableGauge(t *testing.T) {
	m := metrics.New()
	m.RecordsUnreadable(7)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	var help, value string
	for line := range strings.SplitSeq(string(body), "\n") {
		switch {
		case strings.HasPrefix(line, "# HELP membrane_records_unreadable "):
			help = line
		case strings.HasPrefix(line, "membrane_records_unreadable "):
			value = strings.TrimPrefix(line, "membrane_records_unreadable ")
		}
	}
	if value != "7" {
		t.Fatalf("membrane_records_unreadable = %q, want 7", value)
	}
	for _, want := range []string{"shown redacted", "left out of retrieve"} {
		if !strings.Contains(help, want) {
			t.Errorf("help %q does not say %q", help, want)
		}
	}
	if strings.Contains(help, "left out of reads") {
		t.Errorf("help %q says they are left out of reads; record reads show them redacted", help)
	}
}
