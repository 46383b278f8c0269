package bench_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/bench"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestFairnessRun runs the fairness mode briefly against a server over the
// real Neo4j: the idle phase and one phase per attack, the polite client's
// reads answered in every phase and no hostile request answered with a
// server error. It measures nothing: the figures of docs/BENCHMARKS.md come
// from the command. Whether an attack's request is answered within a phase
// depends on the machine's speed; that each one is answered at all is
// TestAttacks'.
//
// The attackers hold a key of their own, as the command's -hostile-key
// runs them: under one key the rate limit the attack earns is the polite
// client's too. The read timeout is cut to a tenth of a phase so that the
// slow bodies are answered within it however busy the machine.
func TestFairnessRun(t *testing.T) {
	scope := neo4jtest.Scope(t)
	const politeKey, hostileKey = "fairness-polite-key", "fairness-hostile-key"
	srv := apptest.Start(t, apptest.Options{
		EncryptionKey: apptest.SealKey(),
		APIKey:        politeKey,
		Principals:    []apptest.Principal{{Key: hostileKey, Actor: "fairness-hostile", Role: "writer", Scopes: []string{scope}}},
		Env:           []string{"MEMBRANE_READ_TIMEOUT=200ms"},
	})
	c := bench.NewClient(srv.URL+"/graphql", politeKey, 2)
	cfg := bench.FairnessConfig{Phase: 2 * time.Second, Interval: 20 * time.Millisecond, Hostile: 2, Scope: scope}
	phases, err := bench.Fairness(t.Context(), c, hostileKey, cfg, func(p bench.FairnessPhase) {
		t.Logf("%s: %d reads (%d failed), p50 %v; %d hostile requests %v", p.Name, p.Probes, p.ProbeErrors, p.P50, p.Sent, p.Answers)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != len(bench.Attacks())+1 || phases[0].Name != "idle" {
		t.Fatalf("%d phases, want idle and one per attack", len(phases))
	}
	for _, p := range phases {
		if p.Probes == 0 || p.ProbeErrors != 0 || p.P50 <= 0 {
			t.Errorf("%s: %d polite reads, %d failed (first: %v), p50 %v", p.Name, p.Probes, p.ProbeErrors, p.FirstProbeError, p.P50)
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

// TestAttacks sends each attack's request once, with no deadline but the
// test's, and waits for its answer: every one is answered (refused or
// not), none with a server error.
func TestAttacks(t *testing.T) {
	scope := neo4jtest.Scope(t)
	const key = "attacks-key"
	srv := apptest.Start(t, apptest.Options{
		EncryptionKey: apptest.SealKey(),
		APIKey:        key,
		// The slow body is cut by the read timeout.
		Env: []string{"MEMBRANE_READ_TIMEOUT=200ms"},
	})
	h := &bench.Hostile{URL: srv.URL + "/graphql", Key: key, HTTP: http.DefaultClient, Scope: scope, Roots: "anything", Hold: 10 * time.Millisecond}
	for _, a := range bench.Attacks() {
		t.Run(a.Name, func(t *testing.T) {
			got := a.Send(t.Context(), h)
			if got == "" || got == "transport" || got == "unsendable" || strings.HasPrefix(got, "5") || strings.Contains(got, "INTERNAL") {
				t.Fatalf("answered %q", got)
			}
			t.Log(got)
		})
	}
}
