package http

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/tracing"
)

// Observability says where Observe reports. The zero value gives request
// ids and access logs to slog.Default() and nothing else.
type Observability struct {
	// Log receives one access line per request.
	Log *slog.Logger
	// Metrics records HTTP and GraphQL metrics; nil records none.
	Metrics *metrics.Metrics
	// ServeMetrics serves Metrics at /metrics on the observed handler
	// (metrics_listen unset); otherwise the server serves them elsewhere.
	ServeMetrics bool
	// Tracer, when set, makes a span per GraphQL operation, continuing
	// the trace of an incoming W3C traceparent header. Nil traces nothing.
	Tracer trace.TracerProvider
}

// Observe wraps h, the handler of NewHandler, with request ids, one access
// log line per request, HTTP metrics and trace propagation. The GraphQL
// operation metrics and spans are made by the extension NewHandler installs
// (OperationObserver), from what Observe puts in the request context; a
// handler not observed has none.
func Observe(h http.Handler, o Observability) http.Handler {
	ob := &observer{next: h, log: o.Log, metrics: o.Metrics}
	if ob.log == nil {
		ob.log = slog.Default()
	}
	if o.Tracer != nil {
		ob.tracer = o.Tracer.Tracer(tracing.Name)
	}
	if o.ServeMetrics && o.Metrics != nil {
		ob.metricsHandler = o.Metrics.Handler()
	}
	return requestID(ob)
}

// observer is the shared part of the observation of every request.
type observer struct {
	next           http.Handler
	log            *slog.Logger
	metrics        *metrics.Metrics
	metricsHandler http.Handler
	tracer         trace.Tracer // nil: off
}

// observation is what the extension learns of one HTTP request's GraphQL
// operation, for its access log line. A WebSocket request carries several
// operations, concurrently: the line shows the last.
type observation struct {
	*observer
	start time.Time

	mu        sync.Mutex
	operation string
	opType    string
	actor     string
}

type observationKey struct{}

func observationOf(ctx context.Context) *observation {
	req, _ := ctx.Value(observationKey{}).(*observation)
	return req
}

func (req *observation) note(operation, opType, actor string) {
	if len(operation) > 64 {
		operation = operation[:64]
	}
	req.mu.Lock()
	req.operation, req.opType, req.actor = operation, opType, actor
	req.mu.Unlock()
}

// route names the handler of a path, a bounded label value: never the raw
// path, which clients choose.
func route(path string) string {
	switch path {
	case "/graphql", "/healthz", "/readyz", "/metrics", mcp.Path:
		return path[1:]
	case "/":
		return "graphiql"
	case PathGraphCytoscape, PathGraphML:
		return "graph_download"
	}
	if strings.HasPrefix(path, "/browser/") {
		return "browser_kit"
	}
	if path == "/explorer" || strings.HasPrefix(path, "/explorer/") {
		return "explorer"
	}
	if strings.HasPrefix(path, assetsPrefix) {
		return "assets"
	}
	return "other"
}

// ServeHTTP serves one request and reports it: an access log line (method,
// path, status, duration, operation, actor; never headers, query string
// or body, which hold keys and record text) and its status in the metrics.
func (ob *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &observation{observer: ob, start: time.Now()}
	ctx := context.WithValue(r.Context(), observationKey{}, req)
	if ob.tracer != nil {
		ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	rt := route(r.URL.Path)
	rec := &recorder{ResponseWriter: w}
	if rt == "metrics" && ob.metricsHandler != nil {
		ob.metricsHandler.ServeHTTP(rec, r.WithContext(ctx))
	} else {
		ob.next.ServeHTTP(rec, r.WithContext(ctx))
	}
	status := rec.status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	ob.metrics.HTTPResponse(rt, status)

	// Probes and scrapes come every few seconds: keep them out of the
	// log unless asked for.
	level := slog.LevelInfo
	if rt == "healthz" || rt == "readyz" || rt == "metrics" {
		level = slog.LevelDebug
	}
	req.mu.Lock()
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.Float64("duration_ms", float64(time.Since(req.start).Microseconds())/1000),
		slog.Int64("bytes", rec.bytes)}
	if req.opType != "" {
		attrs = append(attrs, slog.String("operation", req.operation), slog.String("operation_type", req.opType))
	}
	if req.actor != "" {
		attrs = append(attrs, slog.String("actor", req.actor))
	}
	req.mu.Unlock()
	ob.log.LogAttrs(ctx, level, "request", attrs...)
}

// observeMCP notes what an MCP request asks (its JSON-RPC method and tool,
// mcp.Operation) and who asks, for its access log line, as the GraphQL
// observer notes an operation. It runs after limitBody, which read the
// body into memory.
func observeMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if req := observationOf(r.Context()); req != nil && r.Body != nil {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				writeError(w, http.StatusBadRequest, membrane.EINVALID, "could not read the request body")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			req.note(mcp.Operation(b), "mcp", membrane.TrustFromContext(r.Context()).Principal.Actor)
		}
		next.ServeHTTP(w, r)
	})
}

// recorder remembers a response's status and size. It passes Flush and
// Hijack through, which streaming (server-sent events) and WebSocket
// transports need, and unwraps for http.ResponseController.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	// 1xx responses other than 101 precede the real one.
	if r.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush sends what was written so far.
func (r *recorder) Flush() { _ = r.FlushError() }

// FlushError is Flush reporting its failure (see touchWriter.FlushError).
func (r *recorder) FlushError() error {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return http.NewResponseController(r.ResponseWriter).Flush()
}

// Hijack hands the connection over (WebSocket upgrades).
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("http: the response writer cannot be hijacked")
	}
	if r.status == 0 {
		r.status = http.StatusSwitchingProtocols
	}
	return hj.Hijack()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// OperationObserver is the gqlgen extension that counts, times and traces
// GraphQL operations, and counts their errors by code; it keeps the gauge
// of active subscriptions for Subscription operations, whatever their
// transport (WebSocket, server-sent events). It finds where to report in
// the context Observe made; outside Observe it does nothing. NewHandler
// installs it; a handler.Server of another schema may Use it too.
type OperationObserver struct{}

var (
	_ graphql.HandlerExtension     = OperationObserver{}
	_ graphql.OperationInterceptor = OperationObserver{}
	_ graphql.ResponseInterceptor  = OperationObserver{}
)

// dispatched marks, in an operation's stats, that InterceptOperation saw
// it, so that InterceptResponse counts only operations refused before.
const dispatched = "membrane.observed"

// ExtensionName implements graphql.HandlerExtension.
func (OperationObserver) ExtensionName() string { return "MembraneObserver" }

// Validate implements graphql.HandlerExtension.
func (OperationObserver) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation observes an operation that passed parsing and
// validation: its span, its count and duration (to the first response),
// its errors, and for a subscription the active gauge until it ends.
func (OperationObserver) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	req := observationOf(ctx)
	if req == nil {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	oc.Stats.SetExtension(dispatched, true)
	name, typ := oc.Operation.Name, string(oc.Operation.Operation)
	req.note(name, typ, membrane.TrustFromContext(ctx).Principal.Actor)
	label := req.metrics.OperationLabel(name)

	var span trace.Span
	if req.tracer != nil {
		// Spans carry the name itself: the label's cap on distinct names
		// is for metrics, and without metrics every name would be "other".
		spanName := cmp.Or(name, metrics.Anonymous)
		ctx, span = req.tracer.Start(ctx, "graphql "+typ+" "+spanName, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("graphql.operation.type", typ), attribute.String("graphql.operation.name", spanName)))
	}
	// end reports the operation's end once, however it ends.
	var endOnce sync.Once
	endSub := func() {}
	end := func(failed bool) {
		endOnce.Do(func() {
			endSub()
			if span != nil {
				if failed {
					span.SetStatus(codes.Error, "errors in response")
				}
				span.End()
			}
		})
	}
	if oc.Operation.Operation == ast.Subscription {
		endSub = req.metrics.SubscriptionStarted(subscriptionKind(oc.Operation, label))
		// The transports stop asking for responses once the operation's
		// context ends; the gauge must come down then too.
		context.AfterFunc(ctx, func() { end(false) })
	}
	responses := next(ctx)
	first := true
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		failed := resp != nil && len(resp.Errors) > 0
		if resp != nil {
			countErrors(req.metrics, resp.Errors)
		}
		if first {
			first = false
			req.metrics.GraphQLOperation(label, typ, time.Since(oc.Stats.OperationStart))
		}
		if resp == nil || oc.Operation.Operation != ast.Subscription {
			end(failed)
		}
		return resp
	}
}

// InterceptResponse observes requests refused before their operation ran
// (unparsable, invalid, bad variables): InterceptOperation never saw them.
func (OperationObserver) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	req := observationOf(ctx)
	if req == nil || resp == nil {
		return resp
	}
	name, typ := "", "unknown"
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		if oc.Stats.GetExtension(dispatched) != nil {
			return resp
		}
		name = oc.OperationName
		if oc.Operation != nil {
			name, typ = oc.Operation.Name, string(oc.Operation.Operation)
		}
	}
	req.note(name, typ, membrane.TrustFromContext(ctx).Principal.Actor)
	req.metrics.GraphQLOperation(req.metrics.OperationLabel(name), typ, time.Since(req.start))
	countErrors(req.metrics, resp.Errors)
	return resp
}

func countErrors(m *metrics.Metrics, errs gqlerror.List) {
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		if code == "" {
			code = graph.Code(membrane.EINTERNAL)
		}
		m.GraphQLError(code)
	}
}

// subscriptionKind names a subscription by its root field (bounded by the
// schema), else by its operation label.
func subscriptionKind(op *ast.OperationDefinition, label string) string {
	if len(op.SelectionSet) > 0 {
		if f, ok := op.SelectionSet[0].(*ast.Field); ok {
			return f.Name
		}
	}
	return label
}
