// Package tracing sets up optional OpenTelemetry tracing: spans for GraphQL
// operations (made in internal/http), Neo4j transactions and job runs,
// exported over OTLP/HTTP. When it is not configured nothing is set up and
// the callers skip tracing altogether, so it costs nothing.
package tracing

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of Membrane's spans.
const Name = "github.com/membrane/membrane"

// TracesURL turns an OTLP/HTTP base URL (http://collector:4318) into the
// traces URL, adding /v1/traces when it has no path, as
// OTEL_EXPORTER_OTLP_ENDPOINT is read.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otel_endpoint must be an http(s) URL such as http://collector:4318, got %q", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Provider is a tracer provider that exports spans.
type Provider struct {
	*sdktrace.TracerProvider
}

// New returns a provider exporting over OTLP/HTTP to endpoint, or, when
// endpoint is "", where the standard OTEL_EXPORTER_OTLP_* variables say.
// Sampling follows OTEL_TRACES_SAMPLER (parent-based, always on by
// default); service.name is OTEL_SERVICE_NAME or "membrane".
func New(ctx context.Context, endpoint, version string) (*Provider, error) {
	var opts []otlptracehttp.Option
	if endpoint != "" {
		u, err := TracesURL(endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	return NewWithExporter(exp, version), nil
}

// NewWithExporter returns a provider batching spans to exp; tests pass an
// in-memory exporter.
func NewWithExporter(exp sdktrace.SpanExporter, version string) *Provider {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("membrane"), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	// OTEL_SERVICE_NAME, when set, wins over our default name.
	if env, err := resource.New(context.Background(), resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	return &Provider{sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}
}

// Propagator reads and writes W3C trace context headers.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Store traces Neo4j transactions. It implements the store's observer
// (internal/neo4j.Observer).
type Store struct{ Tracer trace.Tracer }

// Transaction starts a client span for a transaction, only inside a
// traced operation: transactions of nothing traced (health checks) would
// each be a trace of their own.
func (s Store) Transaction(ctx context.Context, mode string) (context.Context, func(attempts int, code string)) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, func(int, string) {}
	}
	ctx, span := s.Tracer.Start(ctx, "neo4j "+mode, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.DBSystemNameKey.String("neo4j"), attribute.String("db.neo4j.mode", mode)))
	return ctx, func(attempts int, code string) {
		span.SetAttributes(attribute.Int("db.neo4j.attempts", attempts))
		if code != "" {
			span.SetAttributes(attribute.String("membrane.error.code", code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}

// Jobs traces job runs, each the root of a trace of its transactions. It
// implements the job runner's observer (internal/jobs.Observer).
type Jobs struct{ Tracer trace.Tracer }

// JobRun starts a span for a run of job.
func (j Jobs) JobRun(ctx context.Context, job string) (context.Context, func(outcome string)) {
	ctx, span := j.Tracer.Start(ctx, "job "+job, trace.WithAttributes(attribute.String("membrane.job", job)))
	return ctx, func(outcome string) {
		span.SetAttributes(attribute.String("membrane.job.outcome", outcome))
		if outcome != "succeeded" && outcome != "skipped" {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}
