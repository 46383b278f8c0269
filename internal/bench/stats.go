// Package bench measures a running Membrane server from outside, as a
// client sees it: the workloads of docs/BENCHMARKS.md (point reads,
// revisions, lineage, captures, retrieval, bulk ingest) over GraphQL on
// HTTP, each reported as latency percentiles and throughput. It starts
// nothing itself; cmd/bench wires it to flags.
package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// Summary is one workload's figures.
type Summary struct {
	Name    string
	Clients int
	// Ops counts the operations that succeeded; Errors those that failed
	// (their latencies are left out of the percentiles).
	Ops, Errors int
	P50, P99    time.Duration
	// PerSecond is successful operations per second of wall time, times
	// Items (records per operation for bulk ingest, else 1).
	PerSecond float64
	Items     int
	// Unit names what PerSecond counts ("ops", "records").
	Unit string
	// Err is the first failure, when there were any.
	Err error
}

// Summarize computes a workload's summary from the latencies of its
// successful operations, its failures and its wall time.
func Summarize(name string, clients int, lat []time.Duration, errors int, wall time.Duration, items int, unit string) Summary {
	s := Summary{Name: name, Clients: clients, Ops: len(lat), Errors: errors, Items: max(items, 1), Unit: unit}
	if s.Unit == "" {
		s.Unit = "ops"
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	s.P50, s.P99 = Percentile(sorted, 0.50), Percentile(sorted, 0.99)
	if wall > 0 {
		s.PerSecond = float64(len(lat)*s.Items) / wall.Seconds()
	}
	return s
}

// Percentile is the nearest-rank percentile p (0 < p <= 1) of sorted
// latencies: the smallest value at or above which lie at least p of them.
// Zero for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes as
// /proc/loadavg says it, or "unknown" where there is none.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// WriteTable writes summaries as a Markdown table.
func WriteTable(w io.Writer, sums []Summary) {
	fmt.Fprintln(w, "| workload | clients | ok | errors | p50 | p99 | throughput |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, s := range sums {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %.0f %s/s |\n", s.Name, s.Clients, s.Ops, s.Errors,
			ms(s.P50), ms(s.P99), s.PerSecond, s.Unit)
	}
}

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
