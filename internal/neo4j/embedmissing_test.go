package neo4j_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// countingEmbedder embeds any text as a fixed vector of testDims numbers,
// counts the texts it was given, and fails every call after failAfter
// calls (never when failAfter is 0).
type countingEmbedder struct {
	model     string
	calls     int
	texts     int
	failAfter int
}

func (e *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	e.calls++
	if e.failAfter > 0 && e.calls > e.failAfter {
		return nil, errors.New("model down")
	}
	e.texts += len(texts)
	out := make([][]float64, len(texts))
	for i := range texts {
		v := make([]float64, testDims)
		v[i%testDims] = 1
		out[i] = v
	}
	return out, nil
}
func (e *countingEmbedder) Dimensions() int { return testDims }
func (e *countingEmbedder) Model() string   { return e.model }

func sensitive(in membrane.RecordInput, s membrane.Sensitivity) membrane.RecordInput {
	in.Sensitivity = &s
	return in
}

func ids(recs []*membrane.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// TestEmbedMissing: the embed job gives a vector by the model to every
// record in reach that has none, at most as sensitive as allowed, replaces
// another model's vector, and a second run finds nothing left to do.
func TestEmbedMissing(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0,
		fact(scope, "low fact", 0.5, nil),
		sensitive(fact(scope, "medium fact", 0.5, nil), membrane.SensitivityMedium),
		sensitive(fact(scope, "high fact", 0.5, nil), membrane.SensitivityHigh),
	)
	low, medium, high := recs[0].ID, recs[1].ID, recs[2].ID
	o := membrane.SweepOptions{Now: t0, Scopes: []string{scope}}

	// Both records first get a vector by another model, which the run
	// replaces.
	old := &countingEmbedder{model: "old-model"}
	if _, err := membrane.EmbedMissing(ctx, db, old, membrane.SensitivityMedium, membrane.SweepOptions{Now: t0, Scopes: []string{scope}}); err != nil {
		t.Fatal(err)
	}

	e := &countingEmbedder{model: "test-model"}
	res, err := membrane.EmbedMissing(ctx, db, e, membrane.SensitivityMedium, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 2 || res.Changed != 2 {
		t.Errorf("first run: scanned %d changed %d, want 2 and 2 (the high record is out of reach)", res.Scanned, res.Changed)
	}
	models, err := db.EmbeddingModels(ctx, ids(recs))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]string{low: {"test-model"}, medium: {"test-model"}, high: nil} {
		if fmt.Sprint(models[id]) != fmt.Sprint(want) {
			t.Errorf("record %s has embeddings by %v, want %v", id, models[id], want)
		}
	}

	again, err := membrane.EmbedMissing(ctx, db, e, membrane.SensitivityMedium, o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Scanned != 0 || again.Changed != 0 {
		t.Errorf("second run: scanned %d changed %d, want nothing", again.Scanned, again.Changed)
	}
	// Another scope's records are out of a scoped run's reach.
	if e.texts != 2 {
		t.Errorf("the model embedded %d texts, want 2", e.texts)
	}
}

// TestEmbedMissingResumes: a run cut short by a failing model keeps the
// batches it stored and fails; the next run embeds only what is left.
func TestEmbedMissingResumes(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	const n = 300 // more than one batch
	ins := make([]membrane.RecordInput, n)
	for i := range ins {
		ins[i] = fact(scope, fmt.Sprintf("fact %d", i), 0.5, nil)
	}
	recs := neo4jtest.Create(t, db, t0, ins...)
	o := membrane.SweepOptions{Now: t0, Scopes: []string{scope}}

	down := &countingEmbedder{model: "test-model", failAfter: 1}
	res, err := membrane.EmbedMissing(ctx, db, down, membrane.SensitivityMedium, o)
	if err == nil {
		t.Fatal("a run whose model failed returned no error")
	}
	if res.Changed != int64(down.texts) || res.Changed == 0 || res.Changed >= n {
		t.Fatalf("the cut-short run stored %d vectors for %d texts embedded, want all of them, some but not all %d", res.Changed, down.texts, n)
	}
	up := &countingEmbedder{model: "test-model"}
	rest, err := membrane.EmbedMissing(ctx, db, up, membrane.SensitivityMedium, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed+rest.Changed != n || up.texts != int(rest.Changed) {
		t.Errorf("the second run embedded %d texts and stored %d vectors after %d, want the %d left", up.texts, rest.Changed, res.Changed, n-res.Changed)
	}
	models, err := db.EmbeddingModels(ctx, ids(recs))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if len(models[r.ID]) != 1 {
			t.Fatalf("record %s has %d embeddings, want 1", r.ID, len(models[r.ID]))
		}
	}
}

// TestSetEmbeddingsGuards: a vector computed from a version of a record
// that has changed since, or for a record that rose above the level, is
// not stored.
func TestSetEmbeddingsGuards(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0, fact(scope, "a", 0.5, nil), sensitive(fact(scope, "b", 0.5, nil), membrane.SensitivityHigh))
	vec := make([]float64, testDims)
	vec[0] = 1
	n, err := db.SetEmbeddings(ctx, "test-model", membrane.SensitivityMedium, []membrane.RecordVector{
		{ID: recs[0].ID, Version: recs[0].Version + 1, Vector: vec},
		{ID: recs[1].ID, Version: recs[1].Version, Vector: vec},
		{ID: "no-such-record", Version: 1, Vector: vec},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("stored %d vectors, want none", n)
	}
}

var _ membrane.Embedder = (*countingEmbedder)(nil)
var _ membrane.EmbedStore = (*neo4j.DB)(nil)
