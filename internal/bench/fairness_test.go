package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/bench"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestFairnessRun runs the fairness mode briefly against a server over the
// real Neo4j: the idle phase and one phase per attack, each attack's
// requests sent and answered (refused or not), and the polite client's
// reads answered in every phase. It measures nothing: the figures of
// docs/BENCHMARKS.md come from the command.
func TestFairnessRun(t *testing.T) {
	srv := apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey()})
	c := bench.NewClient(srv.URL+"/graphql", "", 2)
	cfg := bench.FairnessConfig{Phase: 2 * time.Second, Interval: 20 * time.Millisecond, Hostile: 2, Scope: neo4jtest.Scope(t)}
	phases, err := bench.Fairness(t.Context(), c, "", cfg, func(p bench.FairnessPhase) {
		t.Logf("%s: %d reads (%d failed), p50 %v; %d hostile requests %v", p.Name, p.Probes, p.ProbeErrors, p.P50, p.Sent, p.Answers)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != len(bench.Attacks())+1 || phases[0].Name != "idle" {
		t.Fatalf("%d phases, want idle and one per attack", len(phases))
	}
	for i, p := range phases {
		if p.Probes == 0 || p.ProbeErrors != 0 || p.P50 <= 0 {
			t.Errorf("%s: %d polite reads, %d failed (first: %v), p50 %v", p.Name, p.Probes, p.ProbeErrors, p.FirstProbeError, p.P50)
		}
		if i > 0 && p.Sent == 0 {
			t.Errorf("%s: no hostile request was answered", p.Name)
		}
		for a := range p.Answers {
			if strings.HasPrefix(a, "5") || strings.Contains(a, "INTERNAL") {
				t.Errorf("%s: the server answered %q", p.Name, a)
			}
		}
	}
	var b strings.Builder
	bench.WriteFairness(&b, phases)
	if strings.Count(b.String(), "\n") != len(phases)+2 {
		t.Errorf("table:\n%s", b.String())
	}
}
