package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/membrane/membrane/internal/logging"
)

func TestHandlerAddsContextIDs(t *testing.T) {
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}))
	tests := []struct {
		name string
		ctx  context.Context
		want map[string]any
	}{
		{"no ids", context.Background(), map[string]any{}},
		{"request id", logging.WithRequestID(context.Background(), "r-1"), map[string]any{"request_id": "r-1"}},
		{"request and trace ids", logging.WithRequestID(traced, "r-2"),
			map[string]any{"request_id": "r-2", "trace_id": traceID.String(), "span_id": spanID.String()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			// Derived loggers (With) keep adding the ids.
			log := logging.New(&buf, "json", slog.LevelInfo).With("component", "test")
			log.InfoContext(tt.ctx, "hello")
			log.DebugContext(tt.ctx, "below the level")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("%q: %v", buf.String(), err)
			}
			for _, k := range []string{"request_id", "trace_id", "span_id"} {
				if line[k] != tt.want[k] {
					t.Errorf("%s = %v, want %v", k, line[k], tt.want[k])
				}
			}
			if line["component"] != "test" {
				t.Errorf("line = %v", line)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"debug", slog.LevelDebug, true},
		{"info", slog.LevelInfo, true},
		{"WARN", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"loud", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := logging.ParseLevel(tt.in)
			if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
				t.Fatalf("ParseLevel(%q) = %v, %v", tt.in, got, err)
			}
		})
	}
}
