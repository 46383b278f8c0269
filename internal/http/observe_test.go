package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/logging"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	"github.com/membrane/membrane/internal/tracing"
)

// jsonLines decodes every line the server logged so far (JSON lines).
func jsonLines(t *testing.T, log *apptest.Log) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range log.Lines() {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// observed is a server wrapped by membranehttp.Observe, with metrics, optional
// tracing and its log captured, over a store of its own that reports to
// the same metrics and tracer.
type observed struct {
	*client
	metrics *metrics.Metrics
	logs    *apptest.Log
	spans   *tracetest.InMemoryExporter
}

// newObserved serves the API as internal/app does, observed; setups configure
// the resolver (optional services such as the change feed).
func newObserved(t *testing.T, traced bool, setups ...func(*gqltest.Wiring)) *observed {
	t.Helper()
	o := &observed{metrics: metrics.New(), logs: apptest.NewLog()}
	log := logging.New(o.logs, "json", slog.LevelDebug)
	obs := membranehttp.Observability{Log: log, Metrics: o.metrics, ServeMetrics: true}
	storeObs := []neo4j.Observer{o.metrics}
	if traced {
		o.spans = tracetest.NewInMemoryExporter()
		// A syncer exports each span as it ends, so the test reads them
		// without waiting for a batch.
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.spans))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		obs.Tracer = tp
		storeObs = append(storeObs, tracing.Store{Tracer: tp.Tracer(tracing.Name)})
	}
	db := neo4jtest.Open(t, storeObs...)
	admin := membrane.Principal{Actor: "observer-" + membrane.NewID(), Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	secret := "key-" + membrane.NewID()
	k, err := membrane.NewAPIKey(membrane.HashKey(secret), admin)
	if err != nil {
		t.Fatal(err)
	}
	w := gqltest.NewWiring(db, log)
	w.Stores.Deletes = db
	for _, setup := range setups {
		setup(w)
	}
	srv := httptest.NewServer(membranehttp.Observe(membranehttp.NewHandler(w.Resolver(), db, membrane.NewKeyring([]membrane.APIKey{k}), log), obs))
	t.Cleanup(srv.Close)
	o.client = &client{T: t, URL: srv.URL, DB: db, Key: secret, Actor: admin.Actor, Keys: map[string]string{admin.Actor: secret}}
	return o
}

// scrape reads /metrics and returns its samples by series
// (name{label="value",...}, labels sorted as Prometheus writes them).
func (o *observed) scrape() map[string]float64 {
	o.T.Helper()
	resp, err := http.Get(o.URL + "/metrics")
	if err != nil {
		o.T.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		o.T.Fatalf("/metrics = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			o.T.Fatalf("metrics line %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// post sends a GraphQL request with extra headers and returns the response.
func (o *observed) post(body string, header map[string]string) *http.Response {
	o.T.Helper()
	req, err := http.NewRequest(http.MethodPost, o.URL+"/graphql", strings.NewReader(body))
	if err != nil {
		o.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.T.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestMetricsMoveWithRequests scrapes /metrics after real requests: a
// mutation, named and anonymous queries, a resolver error, a parse error
// and an unauthenticated request each move their series.
func TestMetricsMoveWithRequests(t *testing.T) {
	o := newObserved(t, false)
	scope := neo4jtest.Scope(t)
	o.Do(`mutation Ingest($s: String) { ingestEvent(input: {source: "m", eventKind: "k", ref: "r", scope: $s}) { id } }`,
		map[string]any{"s": scope}, nil)
	o.Do(`query Count($s: String!) { records(filter: {scopes: [$s]}) { totalCount } }`, map[string]any{"s": scope}, nil)
	o.Do(`query Count($s: String!) { records(filter: {scopes: [$s]}) { totalCount } }`, map[string]any{"s": scope}, nil)
	o.Fail("NOT_FOUND", `{ record(id: "does-not-exist") { id } }`, nil)
	o.Raw(`query Broken {`, nil)
	anon := *o.client
	anon.Key = ""
	if resp := anon.Raw(`{ __typename }`, nil); resp.Status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d", resp.Status)
	}
	// The other routes count under their own handler, not "other".
	for path, status := range map[string]int{"/graph.cyjs?roots=x": http.StatusUnauthorized, "/browser/style.grass": http.StatusOK} {
		resp, err := http.Get(o.client.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, status)
		}
	}

	got := o.scrape()
	tests := []struct {
		series string
		want   float64
	}{
		{`membrane_graphql_operations_total{operation="Ingest",type="mutation"}`, 1},
		{`membrane_graphql_operation_duration_seconds_count{operation="Ingest",type="mutation"}`, 1},
		{`membrane_graphql_operations_total{operation="Count",type="query"}`, 2},
		{`membrane_graphql_operations_total{operation="anonymous",type="query"}`, 1},
		{`membrane_graphql_operations_total{operation="anonymous",type="unknown"}`, 1},
		{`membrane_graphql_errors_total{code="NOT_FOUND"}`, 1},
		{`membrane_graphql_errors_total{code="GRAPHQL_PARSE_FAILED"}`, 1},
		{`membrane_http_responses_total{code="200",handler="graphql"}`, 4},
		{`membrane_http_responses_total{code="401",handler="graphql"}`, 1},
		{`membrane_http_responses_total{code="401",handler="graph_download"}`, 1},
		{`membrane_http_responses_total{code="200",handler="browser_kit"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.series, func(t *testing.T) {
			if got[tt.series] != tt.want {
				t.Fatalf("%s = %v, want %v", tt.series, got[tt.series], tt.want)
			}
		})
	}
	// The store's transactions: at least the mutation's write and the
	// queries' reads.
	for _, mode := range []string{"read", "write"} {
		if n := got[`membrane_neo4j_transaction_duration_seconds_count{mode="`+mode+`"}`]; n < 1 {
			t.Errorf("no %s transaction observed", mode)
		}
	}
	// The scrape itself is counted by the next one.
	if got := o.scrape()[`membrane_http_responses_total{code="200",handler="metrics"}`]; got != 1 {
		t.Errorf("metrics responses = %v", got)
	}
}

// TestRequestID checks that each response carries the request id, the
// client's when it is sane, and that the request's log lines carry it too.
func TestRequestID(t *testing.T) {
	o := newObserved(t, false)
	tests := []struct {
		name, sent string
		echoed     bool
	}{
		{"none sent", "", false},
		{"sane id kept", "req-42.a_B", true},
		{"64 characters kept", strings.Repeat("x", 64), true},
		{"65 characters replaced", strings.Repeat("x", 65), false},
		{"space replaced", "a b", false},
		{"markup replaced", "<script>", false},
		{"control character replaced", "a\tb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + o.Key}
			if tt.sent != "" {
				h[membranehttp.HeaderRequestID] = tt.sent
			}
			resp := o.post(`{"query":"query Ping { __typename }"}`, h)
			id := resp.Header.Get(membranehttp.HeaderRequestID)
			switch {
			case tt.echoed && id != tt.sent:
				t.Fatalf("request id = %q, want %q echoed", id, tt.sent)
			case !tt.echoed && (len(id) != 36 || id == tt.sent):
				t.Fatalf("request id = %q, want a generated UUID", id)
			}
			var access map[string]any
			for _, l := range jsonLines(t, o.logs) {
				if l["msg"] == "request" && l["request_id"] == id {
					access = l
				}
			}
			if access == nil {
				t.Fatalf("no access log line with request_id %q in\n%s", id, o.logs)
			}
			if access["status"] != float64(200) || access["path"] != "/graphql" || access["method"] != "POST" ||
				access["operation"] != "Ping" || access["operation_type"] != "query" || access["actor"] != o.Actor ||
				access["duration_ms"] == nil {
				t.Fatalf("access log line = %v", access)
			}
		})
	}
}

// TestLogsKeepSecrets sends requests with an API key and record text, some
// failing, and checks that neither ever reaches the log.
func TestLogsKeepSecrets(t *testing.T) {
	o := newObserved(t, false)
	const text = "PAYLOAD-TEXT-do-not-log-7c1e"
	scope := neo4jtest.Scope(t)
	requests := []struct {
		name, query string
		vars        map[string]any
	}{
		{"mutation with the text inline", `mutation { ingestEvent(input: {source: "s", eventKind: "k", ref: "r", summary: "` + text + `", scope: "` + scope + `"}) { id } }`, nil},
		{"mutation with the text in variables", `mutation($t: String, $s: String) { ingestEvent(input: {source: "s", eventKind: "k", ref: "r", summary: $t, scope: $s}) { id } }`,
			map[string]any{"t": text, "s": scope}},
		{"invalid input holding the text", `mutation($t: String) { ingestEvent(input: {source: $t, eventKind: "", ref: ""}) { id } }`, map[string]any{"t": text}},
		{"unparsable request holding the text", `query { "` + text, nil},
	}
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			o.Raw(rq.query, rq.vars)
		})
	}
	bad := *o.client
	bad.Key = "wrong-" + text
	bad.Raw(`{ __typename }`, nil)
	logs := o.logs.String()
	if !strings.Contains(logs, `"msg":"request"`) {
		t.Fatalf("no access log lines:\n%s", logs)
	}
	for _, secret := range []string{o.Key, text, "Bearer"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q:\n%s", secret, logs)
		}
	}
}

// TestTracingSpans checks that a traced GraphQL request yields a server
// span for its operation, continuing the caller's trace, with the Neo4j
// transactions it ran as children.
func TestTracingSpans(t *testing.T) {
	o := newObserved(t, true)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp := o.post(`{"query":"query Find { record(id: \"does-not-exist\") { id } }"}`, map[string]string{
		"Authorization": "Bearer " + o.Key, "traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	spans := o.spans.GetSpans()
	var op *tracetest.SpanStub
	for i := range spans {
		if spans[i].Name == "graphql query Find" {
			op = &spans[i]
		}
	}
	if op == nil {
		t.Fatalf("no operation span in %v", names(spans))
	}
	if op.SpanContext.TraceID().String() != traceID {
		t.Fatalf("operation span in trace %s, want the caller's %s", op.SpanContext.TraceID(), traceID)
	}
	children := 0
	for _, s := range spans {
		if s.Name == "neo4j read" && s.Parent.SpanID() == op.SpanContext.SpanID() {
			children++
		}
	}
	if children == 0 {
		t.Fatalf("no neo4j span under the operation in %v", names(spans))
	}
	if op.Status.Code.String() != "Error" {
		t.Fatalf("operation span status = %v, want Error (NOT_FOUND)", op.Status)
	}
	// Transactions of no traced operation (a readiness probe) make none.
	before := len(o.spans.GetSpans())
	if r, err := http.Get(o.URL + "/readyz"); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %v", err)
	}
	if after := len(o.spans.GetSpans()); after != before {
		t.Fatalf("/readyz made %d spans", after-before)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
