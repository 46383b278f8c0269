package graph_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/metrics"
)

// TestSubscriptionGauge runs a subscription over server-sent events on
// gqlgen's test schema (Membrane's has no Subscription type yet) with the
// operation observer: the active gauge is up while it streams and down once
// it completes.
func TestSubscriptionGauge(t *testing.T) {
	ts := testserver.New()
	ts.AddTransport(transport.SSE{})
	ts.Use(graph.OperationObserver{})
	m := metrics.New()
	srv := httptest.NewServer(graph.Observe(ts, graph.Observability{Metrics: m, ServeMetrics: true,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"subscription Names { name }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)

	gauge := `membrane_graphql_subscriptions_active{kind="name"} `
	steps := []struct {
		name string
		act  func()
		want string
	}{
		// The test schema hands an event over only to a subscription
		// that is running: once it is taken, the observer has seen the
		// operation.
		{"streaming", func() {
			ts.SendNextSubscriptionMessage()
			readUntil(t, stream, `"name":"test"`)
		}, gauge + "1"},
		{"completed", func() {
			ts.SendCompleteSubscriptionMessage()
			_, _ = io.Copy(io.Discard, stream) // the stream ends after the operation did
		}, gauge + "0"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.act()
			body := scrapeURL(t, srv.URL+"/metrics")
			if !strings.Contains(body, st.want+"\n") {
				t.Fatalf("want %q in\n%s", st.want, body)
			}
			if !strings.Contains(body, `membrane_graphql_operations_total{operation="Names",type="subscription"} 1`+"\n") {
				t.Fatalf("subscription not counted in\n%s", body)
			}
		})
	}
}

func readUntil(t *testing.T, r *bufio.Reader, s string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, s) {
			return
		}
		if err != nil {
			t.Fatalf("stream ended before %q: %v", s, err)
		}
	}
}

func scrapeURL(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
