package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/bench"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"median of five is the third", ms(1, 2, 3, 4, 5), 0.5, 3 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p99 of 10 is the largest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{"p100", ms(1, 2, 3), 1, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bench.Percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	lat := []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	s := bench.Summarize("ingest", 1, lat, 1, 2*time.Second, 1000, "records")
	if s.Ops != 4 || s.Errors != 1 || s.P50 != 2*time.Millisecond || s.P99 != 4*time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
	if s.PerSecond != 2000 { // 4 batches of 1,000 in 2 s
		t.Fatalf("throughput %v, want 2000 records/s", s.PerSecond)
	}
	if s := bench.Summarize("read", 8, lat, 0, time.Second, 0, ""); s.PerSecond != 4 || s.Unit != "ops" {
		t.Fatalf("summary %+v, want 4 ops/s", s)
	}
	var b strings.Builder
	bench.WriteTable(&b, []bench.Summary{s})
	if !strings.Contains(b.String(), "| ingest | 1 | 4 | 1 | 2.00 ms | 4.00 ms | 2000 records/s |") {
		t.Fatalf("table:\n%s", b.String())
	}
}
