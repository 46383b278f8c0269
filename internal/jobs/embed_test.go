package jobs_test

import (
	"context"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// fixedEmbedder embeds every text as the same vector of 384 numbers (the
// dimensions of the shared test database's vector index).
type fixedEmbedder struct{}

func (fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i := range out {
		out[i] = make([]float64, 384)
		out[i][0] = 1
	}
	return out, nil
}
func (fixedEmbedder) Dimensions() int { return 384 }
func (fixedEmbedder) Model() string   { return "jobs-test-model" }

// The embed job runs once when the runner starts (AtStart), so that a
// database written before vector search was on gets its vectors without
// waiting for the schedule, and its run is recorded like any other.
func TestEmbedJobRunsAtStart(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	facts(t, db, scope, 3, t0)
	c := gqltest.NewClock(t0)
	seen := make(ends, 10)
	r := runner(t, db, c, "embed-at-start", []string{scope}, func(cfg *jobs.Config) {
		cfg.Schedules = map[membrane.JobName]string{membrane.JobEmbed: "@every 10m"}
		cfg.AtStart = []membrane.JobName{membrane.JobEmbed}
		cfg.Embedder = fixedEmbedder{}
		cfg.Observers = []jobs.Observer{seen}
	})
	r.Start()
	if got := gqltest.Await(t, seen, "the embed run at start"); got != jobs.OutcomeSucceeded {
		t.Fatalf("outcome = %s", got)
	}
	page, err := r.JobRuns(sysCtx(), new(membrane.JobEmbed), membrane.Page{First: 500})
	if err != nil {
		t.Fatal(err)
	}
	var runs []*membrane.JobRun
	for _, run := range page.Items {
		if len(run.Scopes) == 1 && run.Scopes[0] == scope {
			runs = append(runs, run)
		}
	}
	if len(runs) != 1 || runs[0].Job != membrane.JobEmbed || runs[0].Scanned != 3 || runs[0].Changed != 3 || runs[0].Trigger != membrane.TriggerSchedule ||
		runs[0].Slot == nil || !runs[0].Slot.Equal(t0) {
		for _, run := range runs {
			t.Logf("run %+v", *run)
		}
		t.Fatalf("want one run at start, for the slot of the start, that embedded the 3 records")
	}
}

// Without an embedding model the embed job is not scheduled, and run on
// demand it fails saying why.
func TestEmbedJobWithoutModel(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	r := runner(t, neo4jtest.DB(t), c, "embed-no-model", []string{scope}, func(cfg *jobs.Config) {
		cfg.Schedules = map[membrane.JobName]string{membrane.JobEmbed: "@every 10m"}
	})
	run, err := r.RunJob(sysCtx(), membrane.JobEmbed)
	if err != nil {
		t.Fatal(err)
	}
	if run.Outcome != membrane.JobFailed || run.Error == "" {
		t.Fatalf("run = %+v; want failed, saying no model is configured", run)
	}
}
