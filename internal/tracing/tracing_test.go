package tracing_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/membrane/membrane/internal/tracing"
)

func TestTracesURL(t *testing.T) {
	tests := []struct{ name, endpoint, url string }{
		{"base URL", "http://collector:4318", "http://collector:4318/v1/traces"},
		{"base URL with slash", "https://collector:4318/", "https://collector:4318/v1/traces"},
		{"full URL kept", "http://collector:4318/custom/traces", "http://collector:4318/custom/traces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tracing.TracesURL(tt.endpoint); err != nil || got != tt.url {
				t.Fatalf("TracesURL = %q, %v; want %q", got, err, tt.url)
			}
		})
	}
	if _, err := tracing.TracesURL("collector:4318"); err == nil {
		t.Fatal("a URL without scheme was accepted")
	}
}

// Job runs are root spans; store transactions are spans only inside one.
func TestJobAndStoreSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer(tracing.Name)
	store, jobs := tracing.Store{Tracer: tracer}, tracing.Jobs{Tracer: tracer}

	_, end := store.Transaction(context.Background(), "read")
	end(1, "")
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("a transaction outside any span made %d spans", n)
	}
	ctx, endRun := jobs.JobRun(context.Background(), "decay")
	_, end = store.Transaction(ctx, "autocommit")
	end(1, "UNAVAILABLE")
	endRun("failed")
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "neo4j autocommit" || spans[1].Name != "job decay" ||
		spans[0].Parent.SpanID() != spans[1].SpanContext.SpanID() || spans[0].Status.Code.String() != "Error" {
		t.Fatalf("spans = %+v", spans)
	}
}
