// Command bench-reference measures the reference system (the gRPC daemon
// membraned of github.com/BennettSchwartz/membrane) from outside with the
// workloads of cmd/bench, for a side by side with this server
// (docs/BENCHMARKS.md, "Beside the reference"). It is a module of its own,
// so that the main module does not depend on the reference: its go.mod
// takes the reference from a checkout in ./reference, which
// scripts/bench.sh links there when BENCH_REFERENCE names one. It starts
// nothing: run membraned first, then
//
//	go run . -addr 127.0.0.1:19090 -ops 500
//
// The reference has no lineage query: its lineage workload reads the
// chain record by record (RetrieveByID, following each record's
// supersedes relation), as a client of it must.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"time"

	"github.com/membrane/membrane/internal/bench"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:19090", "the reference daemon's gRPC address")
	key := flag.String("key", os.Getenv("MEMBRANE_API_KEY"), "its API key, if it has one (default $MEMBRANE_API_KEY)")
	ops := flag.Int("ops", 500, "timed operations per workload")
	only := flag.String("only", "", "run only the workloads whose names match this regular expression")
	flag.Parse()
	cfg := bench.Config{Ops: *ops, Scope: fmt.Sprintf("bench-%d", time.Now().UnixNano())}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-reference: -only:", err)
			os.Exit(2)
		}
		cfg.Only = re
	}
	if *ops < 1 {
		fmt.Fprintln(os.Stderr, "bench-reference: -ops must be at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := dial(*addr, *key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-reference:", err)
		os.Exit(2)
	}
	defer c.close()
	fmt.Printf("bench against the reference at %s, scope %s, %d ops per workload\n", *addr, cfg.Scope, cfg.Ops)
	fmt.Printf("load average at start: %s\n\n", bench.LoadAverage())
	sums, err := bench.RunOn(ctx, c, workloads(), cfg, func(s bench.Summary) {
		fmt.Fprintf(os.Stderr, "  %s (c=%d): p50 %v, %d errors\n", s.Name, s.Clients, s.P50, s.Errors)
		if s.Err != nil {
			fmt.Fprintf(os.Stderr, "    first error: %v\n", s.Err)
		}
	})
	bench.WriteTable(os.Stdout, sums)
	fmt.Printf("\nload average at end: %s\n", bench.LoadAverage())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-reference:", err)
		os.Exit(1)
	}
}
