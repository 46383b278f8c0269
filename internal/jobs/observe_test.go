package jobs_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

type markKey struct{}

// recorder is a job observer that marks the run's context and remembers
// every outcome.
type recorder struct {
	mu       sync.Mutex
	outcomes []string
}

func (r *recorder) JobRun(ctx context.Context, job string) (context.Context, func(string)) {
	return context.WithValue(ctx, markKey{}, job), func(outcome string) {
		r.mu.Lock()
		r.outcomes = append(r.outcomes, outcome)
		r.mu.Unlock()
	}
}

func (r *recorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.outcomes) == 0 {
		return ""
	}
	return r.outcomes[len(r.outcomes)-1]
}

// probe is the real store, whose decay sweep notes what its context holds
// and, when told to, panics or waits for the run to be stopped.
type probe struct {
	*neo4j.DB
	mu    sync.Mutex
	mark  any
	actor string
	mode  string // "", "panic", "block"
}

func (p *probe) DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error) {
	p.mu.Lock()
	p.mark, p.actor = ctx.Value(markKey{}), membrane.TrustFromContext(ctx).Principal.Actor
	mode := p.mode
	p.mu.Unlock()
	switch mode {
	case "panic":
		panic("sweep exploded")
	case "block":
		<-ctx.Done()
		return membrane.SweepResult{}, ctx.Err()
	}
	return p.DB.DecaySweep(ctx, o)
}

// TestObserversSeeEveryOutcome runs jobs that succeed, fail, time out and
// find their lease taken, and checks what observers and the metrics got;
// the run works in the observer's context, with the system's trust even
// when a reader asked for it.
func TestObserversSeeEveryOutcome(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	rec := &recorder{}
	m := metrics.New()
	store := &probe{DB: db}
	r := runner(t, store, c, "observed", []string{scope}, func(cfg *jobs.Config) {
		cfg.Observers = []jobs.Observer{m, rec}
		cfg.Timeout = 200 * time.Millisecond
	})
	reader := membrane.NewContextWithTrust(context.Background(), membrane.Trust{Principal: membrane.Principal{Actor: "a-reader", Role: membrane.RoleReader}})
	tests := []struct {
		name, mode, want string
		before           func()
	}{
		{"succeeded", "", jobs.OutcomeSucceeded, nil},
		{"failed", "panic", jobs.OutcomeFailed, nil},
		{"timed out", "block", jobs.OutcomeTimeout, nil},
		{"lease held elsewhere", "", jobs.OutcomeSkipped, func() {
			if _, err := db.UpdateLease(sysCtx(), membrane.LeaseKey(membrane.JobDecay, []string{scope}),
				func(l membrane.Lease) (membrane.Lease, error) {
					return l.Acquire("elsewhere", "elsewhere-run", nil, t0, time.Minute)
				}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.mu.Lock()
			store.mode, store.mark, store.actor = tt.mode, nil, ""
			store.mu.Unlock()
			if tt.before != nil {
				tt.before()
			}
			_, _ = r.RunJob(reader, membrane.JobDecay)
			if got := rec.last(); got != tt.want {
				t.Fatalf("outcome = %q, want %q", got, tt.want)
			}
			store.mu.Lock()
			defer store.mu.Unlock()
			if tt.want != jobs.OutcomeSkipped && (store.mark != "decay" || store.actor != membrane.JobActor) {
				t.Fatalf("the run saw mark %v and actor %q", store.mark, store.actor)
			}
		})
	}
	out := httptest.NewRecorder()
	m.Handler().ServeHTTP(out, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(out.Body)
	for _, outcome := range []string{jobs.OutcomeSucceeded, jobs.OutcomeFailed, jobs.OutcomeTimeout, jobs.OutcomeSkipped} {
		line := `membrane_job_runs_total{job="decay",outcome="` + outcome + `"} 1`
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("want %q in the metrics", line)
		}
	}
}
