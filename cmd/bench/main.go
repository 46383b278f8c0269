// Command bench measures a running Membrane server from outside: point
// reads, revisions, lineage, captures, bulk ingest and retrieval over
// GraphQL, each as p50, p99 and throughput, with the machine's load
// average at the start and the end (docs/BENCHMARKS.md). It starts
// nothing: run the server first (scripts/run.sh), then
//
//	go run ./cmd/bench -url http://127.0.0.1:8080/graphql -records 100000
//
// It writes into a scope of its own (bench-<time>), which it leaves behind.
// With -rss it also reports the resident memory of the processes it names
// (the server, Neo4j) at the start, at the end and at their peak, read
// from /proc every quarter second:
//
//	go run ./cmd/bench -rss server=$(pgrep -f '^bin/membrane'),neo4j=$(cat .neo4j/dev/neo4j.pid)
//
// With -fairness it measures instead how much hostile clients slow a
// polite one down: a point read every 20 ms, alone and then beside 4
// clients of each attack in turn (bench.Attacks), each phase 20 s, with the
// polite client's p50 and p95 per phase and the hostile requests' answers
// by status and code. -hostile-key gives the attackers a key of their own
// (another principal); by default they use -key.
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
	url := flag.String("url", "http://127.0.0.1:8080/graphql", "the server's GraphQL endpoint")
	key := flag.String("key", os.Getenv("MEMBRANE_BENCH_KEY"), "an admin or writer API key (default $MEMBRANE_BENCH_KEY; none in dev mode)")
	ops := flag.Int("ops", 500, "timed operations per workload")
	records := flag.Int("records", 10000, "records the bulk ingest writes (in batches of 1,000) and retrieval searches")
	cold := flag.Int("cold", 1000, "point reads of the cold workload, run first without a warm-up (0: none)")
	only := flag.String("only", "", "run only the workloads whose names match this regular expression")
	corpus := flag.String("corpus", "", "search the corpus an earlier run wrote to this scope (its \"scope bench-…\" line) instead of writing one")
	rss := flag.String("rss", "", "NAME=PID,… of processes whose resident memory (with their children's) to report")
	fairness := flag.Bool("fairness", false, "measure a polite client beside hostile ones instead of the workloads")
	hostileKey := flag.String("hostile-key", "", "the hostile clients' API key with -fairness (default -key)")
	phase := flag.Duration("phase", bench.DefaultFairness.Phase, "each phase's length with -fairness")
	flag.Parse()
	procs, err := bench.ParseProcesses(*rss)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: -rss:", err)
		os.Exit(2)
	}
	cfg := bench.Config{Ops: *ops, Records: *records, ColdOps: *cold, Scope: fmt.Sprintf("bench-%d", time.Now().UnixNano()), Corpus: *corpus}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -only:", err)
			os.Exit(2)
		}
		cfg.Only = re
	}
	if *ops < 1 || *records < 1000 {
		fmt.Fprintln(os.Stderr, "bench: -ops must be at least 1 and -records at least 1000")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *fairness {
		fc := bench.DefaultFairness
		fc.Phase, fc.Scope, fc.Only = *phase, cfg.Scope, cfg.Only
		fmt.Printf("fairness against %s, scope %s: a read every %v, %d hostile clients per attack, %v per phase\n",
			*url, fc.Scope, fc.Interval, fc.Hostile, fc.Phase)
		os.Exit(measure(procs, func() error {
			phases, err := bench.Fairness(ctx, bench.NewClient(*url, *key, 2), *hostileKey, fc, func(p bench.FairnessPhase) {
				fmt.Fprintf(os.Stderr, "  %s: polite p50 %v p95 %v, %d hostile requests\n", p.Name, p.P50, p.P95, p.Sent)
				if p.FirstProbeError != nil {
					fmt.Fprintf(os.Stderr, "    first failed read: %v\n", p.FirstProbeError)
				}
			})
			bench.WriteFairness(os.Stdout, phases)
			return err
		}))
	}
	if cfg.Corpus != "" {
		fmt.Printf("bench against %s, scope %s, %d ops per workload, searching the corpus of scope %s\n", *url, cfg.Scope, cfg.Ops, cfg.Corpus)
	} else {
		fmt.Printf("bench against %s, scope %s, %d ops per workload, %d records\n", *url, cfg.Scope, cfg.Ops, cfg.Records)
	}
	os.Exit(measure(procs, func() error {
		sums, err := bench.Run(ctx, bench.NewClient(*url, *key, 8), cfg, func(s bench.Summary) {
			fmt.Fprintf(os.Stderr, "  %s (c=%d): p50 %v, %d errors\n", s.Name, s.Clients, s.P50, s.Errors)
			if s.Err != nil {
				fmt.Fprintf(os.Stderr, "    first error: %v\n", s.Err)
			}
		})
		bench.WriteTable(os.Stdout, sums)
		return err
	}))
}

// measure runs run between the load averages at its start and end and,
// with procs, the resident memory of those processes; it returns the exit
// status.
func measure(procs []bench.Process, run func() error) int {
	fmt.Printf("load average at start: %s\n\n", bench.LoadAverage())
	var mem *bench.MemoryWatch
	if len(procs) > 0 {
		var err error
		if mem, err = bench.WatchMemory("/proc", procs, 250*time.Millisecond); err != nil {
			fmt.Fprintln(os.Stderr, "bench: -rss:", err)
			return 2
		}
	}
	err := run()
	fmt.Printf("\nload average at end: %s\n", bench.LoadAverage())
	if mem != nil {
		if merr := mem.Stop(os.Stdout); merr != nil {
			fmt.Fprintln(os.Stderr, "bench: -rss:", merr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}
