package neo4j_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// inDatabaseEmbedder returns the embedder of the test Neo4j. Without the
// plugin (a server started before it existed, or with NEO4J_EMBED=off) it
// skips, except in CI, whose Neo4j scripts/neo4j.sh starts with it.
func inDatabaseEmbedder(tb testing.TB) *neo4j.Embedder {
	tb.Helper()
	db := neo4jtest.DB(tb)
	e, err := db.InDatabaseEmbedder(tb.Context())
	if errors.Is(err, neo4j.ErrNoEmbedder) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("the test Neo4j has no embedding plugin, which scripts/neo4j.sh installs: %v", err)
		}
		tb.Skipf("the test Neo4j has no embedding plugin (restart it with scripts/neo4j.sh to install it): %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// TestInDatabaseEmbedderProbe: the probe reads what the plugin runs, and
// never answers (nil, nil).
func TestInDatabaseEmbedderProbe(t *testing.T) {
	e := inDatabaseEmbedder(t)
	if e.Model() != "all-minilm-l6-v2-q" || e.Dimensions() != 384 {
		t.Fatalf("model %q, %d dimensions; want all-minilm-l6-v2-q, 384", e.Model(), e.Dimensions())
	}
	var _ membrane.Embedder = e
	if code := membrane.ErrorCode(neo4j.ErrNoEmbedder); code != membrane.ENOTFOUND {
		t.Errorf("ErrNoEmbedder has code %q, want %q", code, membrane.ENOTFOUND)
	}
}

// TestInDatabaseEmbed: unit vectors of the model's length, whose
// similarities mean something: a paraphrase is nearer than an unrelated
// sentence.
func TestInDatabaseEmbed(t *testing.T) {
	e := inDatabaseEmbedder(t)
	vecs, err := e.Embed(t.Context(), []string{
		"The cat sat on the mat.",
		"A kitten was sitting on the rug.",
		"Quarterly revenue grew by ten percent in Europe.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 {
		t.Fatalf("%d vectors for 3 texts", len(vecs))
	}
	for i, v := range vecs {
		if len(v) != 384 {
			t.Fatalf("vector %d has %d numbers, want 384", i, len(v))
		}
		if n := norm(v); math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d has norm %v, want 1", i, n)
		}
	}
	para, unrelated := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2])
	t.Logf("cosine: paraphrase %.3f, unrelated %.3f", para, unrelated)
	if para <= unrelated+0.2 {
		t.Errorf("paraphrase cosine %.3f is not clearly above the unrelated one %.3f", para, unrelated)
	}
}

// TestInDatabaseEmbedBatchOrder: 300 texts (two statements, of 256 and 44)
// come back in order, each near its vector embedded alone. Not equal: the
// model is quantized with activation scales computed per batch, so a
// text's vector moves a little with its batch mates (cosine about 0.99;
// the quantized model is as far from the full-precision one).
func TestInDatabaseEmbedBatchOrder(t *testing.T) {
	e := inDatabaseEmbedder(t)
	topics := []string{"deploys of the billing service", "the PostgreSQL failover", "Alice's onboarding plan",
		"a flaky integration test", "the quarterly budget review", "rotating the TLS certificates"}
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = fmt.Sprintf("Note %d about %s, written on day %d of the sprint.", i, topics[i%len(topics)], i%10)
	}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i := 0; i < len(texts); i += 23 { // a spread of positions, both statements
		alone, err := e.Embed(t.Context(), texts[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		c := cosine(vecs[i], alone[0])
		if c < 0.97 {
			t.Errorf("text %d: cosine %.4f to its vector embedded alone", i, c)
		}
		// Nearer to itself alone than to any batch vector of another topic:
		// the order was kept (texts of one topic differ in a number or two,
		// as close to each other as a batch moves a vector).
		for j := range vecs {
			if j%len(topics) != i%len(topics) && cosine(vecs[j], alone[0]) >= c {
				t.Errorf("text %d alone is nearer to batch vector %d (%.4f) than to its own (%.4f)", i, j, cosine(vecs[j], alone[0]), c)
				break
			}
		}
	}
}

// TestInDatabaseEmbedEdges: an empty list needs no call, a blank text is
// an error of its own, and odd texts (a NUL, 100 KB) embed.
func TestInDatabaseEmbedEdges(t *testing.T) {
	e := inDatabaseEmbedder(t)
	vecs, err := e.Embed(t.Context(), nil)
	if err != nil || len(vecs) != 0 {
		t.Fatalf("no texts: %d vectors, %v", len(vecs), err)
	}
	_, err = e.Embed(t.Context(), []string{"some text", "  \n"})
	if membrane.ErrorCode(err) != membrane.EINVALID || !strings.Contains(err.Error(), "text 1 is blank") {
		t.Errorf("a blank text: %v, want EINVALID naming text 1", err)
	}
	long := strings.Repeat("The rollback of the billing service took an hour. ", 2000) // 100 KB
	vecs, err = e.Embed(t.Context(), []string{"before\x00after", long, long[:4000]})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if len(v) != 384 || math.Abs(norm(v)-1) > 1e-4 {
			t.Errorf("vector %d: %d numbers, norm %v", i, len(v), norm(v))
		}
	}
	// The model reads 256 tokens: 100 KB and its first 4 KB are the same text to it.
	if c := cosine(vecs[1], vecs[2]); c < 0.97 {
		t.Errorf("100 KB text vs its first 4 KB: cosine %.4f", c)
	}
}

// BenchmarkInDatabaseEmbed embeds batches of 64 and 256 short sentences
// (about 15 words) through Bolt and reports texts/s, and one at a time, as
// a retrieval embeds its query, and reports ms per call. Run on an idle
// machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench InDatabaseEmbed -benchtime 20x ./internal/neo4j/
func BenchmarkInDatabaseEmbed(b *testing.B) {
	e := inDatabaseEmbedder(b)
	words := strings.Fields("the agent deployed a new version of the billing service after the database failover " +
		"and wrote a note about rollback plans tests alerts budgets certificates onboarding incidents")
	for _, size := range []int{1, 64, 256} {
		b.Run(fmt.Sprint("batch=", size), func(b *testing.B) {
			n := 0
			batch := func() []string {
				out := make([]string, size)
				for i := range out {
					n++
					w := make([]string, 15)
					for j := range w {
						w[j] = words[(n*7+j*3+j*j)%len(words)]
					}
					out[i] = fmt.Sprintf("%s %d.", strings.Join(w, " "), n)
				}
				return out
			}
			if _, err := e.Embed(b.Context(), batch()); err != nil { // warm
				b.Fatal(err)
			}
			var busy time.Duration
			texts := 0
			for b.Loop() {
				in := batch()
				t0 := time.Now()
				if _, err := e.Embed(b.Context(), in); err != nil {
					b.Fatal(err)
				}
				busy += time.Since(t0)
				texts += len(in)
			}
			b.ReportMetric(float64(texts)/busy.Seconds(), "texts/s")
			if size == 1 {
				b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "ms/call")
			}
		})
	}
}

// BenchmarkIngestInDatabaseEmbed ingests batches of 256 episodic records of
// about 15 words through the ingest service, as ingestBatch's resolver
// does, with the in-database embedder giving each its vector (one embed
// statement, then the write transaction), and without an embedder, and
// reports records/s: what embedding inside Neo4j costs a write end to end.
// The last case writes them in a scope of 300 entities named by two of
// their words, which their text then mentions (several each).
// Run on an idle machine:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench IngestInDatabaseEmbed -benchtime 20x ./internal/neo4j/
func BenchmarkIngestInDatabaseEmbed(b *testing.B) {
	e := inDatabaseEmbedder(b)
	db := neo4jtest.DB(b)
	if err := db.EnsureVectorIndex(b.Context(), e.Dimensions()); err != nil {
		b.Fatal(err)
	}
	scope := neo4jtest.Scope(b)
	neo4jtest.DeleteAtEnd(b, db, scope)
	const size = 256
	words := strings.Fields("deploy rollback incident billing service database failover alert budget review " +
		"certificate rotation onboarding plan flaky test cache latency queue backlog")
	n := 0
	inputs := func() []*membrane.RecordInput {
		out := make([]*membrane.RecordInput, size)
		for i := range out {
			n++
			w := make([]string, 14)
			for j := range w {
				w[j] = words[(n*5+j*j+j)%len(words)]
			}
			out[i] = &membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: ptr(scope), Payload: membrane.PayloadInput{
				Episodic: &membrane.EpisodicPayload{Timeline: []membrane.TimelineEvent{{T: t0.Add(time.Duration(n) * time.Second),
					EventKind: "observation", Ref: fmt.Sprint("embed-bench-", n), Summary: fmt.Sprintf("%s %d", strings.Join(w, " "), n)}}}}}
		}
		return out
	}
	// A scope's entities named by two words of the texts, for the case
	// that links the records to those their text names.
	named := neo4jtest.Scope(b)
	neo4jtest.DeleteAtEnd(b, db, named)
	for _, bm := range []struct {
		name     string
		embed    bool
		entities int
	}{{"embedder=in-database", true, 0}, {"embedder=none", false, 0}, {"embedder=none/entities=300", false, 300}} {
		b.Run(bm.name, func(b *testing.B) {
			if bm.entities > 0 && scope != named { // once, however often the case runs
				scope = named
				var es []membrane.RecordInput
				for i := range bm.entities {
					es = append(es, membrane.RecordInput{Type: membrane.TypeEntity, Scope: ptr(scope), Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{
						CanonicalName: words[i%len(words)] + " " + words[i/len(words)%len(words)], PrimaryType: "Thing"}}})
				}
				neo4jtest.Create(b, db, t0, es...)
				if err := db.AwaitSearchIndexes(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			var warnings strings.Builder
			timed := &timedEmbedder{Embedder: e}
			opts := membrane.ServiceOptions{Policy: membrane.DefaultPolicy(), Log: slog.New(slog.NewTextHandler(&warnings, nil))}
			if bm.embed {
				opts.Embedder = timed
			}
			svc := membrane.NewServices(membrane.Stores{Records: db, Revisions: db, Lineages: db}, opts)
			ctx := membrane.NewContextWithTrust(b.Context(), membrane.SystemTrust("bench"))
			var busy time.Duration
			records := 0
			for b.Loop() {
				in := inputs()
				start := time.Now()
				if _, err := svc.Ingest.CreateRecords(ctx, in, ptr("bench"), nil, "inputs"); err != nil {
					b.Fatal(err)
				}
				busy += time.Since(start)
				records += len(in)
			}
			if warnings.Len() > 0 { // embedding failures are only logged
				b.Fatalf("the service warned: %s", warnings.String())
			}
			b.ReportMetric(float64(records)/busy.Seconds(), "records/s")
			if bm.embed {
				b.ReportMetric(float64(timed.busy.Milliseconds())/float64(records/size), "embed-ms/op")
			}
		})
	}
}

// timedEmbedder adds up the time its Embedder takes.
type timedEmbedder struct {
	membrane.Embedder
	busy time.Duration
}

func (t *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	start := time.Now()
	defer func() { t.busy += time.Since(start) }()
	return t.Embedder.Embed(ctx, texts)
}

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
	neo4jtest.DeleteAtEnd(t, db, scope)
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

// TestVectorsStoredAs32BitFloats: a vector written with its record and
// one the embed job stores are both kept as 32-bit floats (half the bytes
// of Cypher floats, which a cosine reads for every full-text match): 0.1
// reads back as float32(0.1), not 0.1.
func TestVectorsStoredAs32BitFloats(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	neo4jtest.DeleteAtEnd(t, db, scope)
	tenths := func() []float64 {
		v := make([]float64, testDims)
		for i := range v {
			v[i] = 0.1
		}
		return v
	}
	r, err := membrane.DefaultPolicy().BuildRecord(fact(scope, "written with its vector", 0.5, nil), t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", t0),
		Embedding: tenths(), EmbeddingModel: "f32-test"}}); err != nil {
		t.Fatal(err)
	}
	later := neo4jtest.Create(t, db, t0, fact(scope, "embedded by the job", 0.5, nil))[0]
	if _, err := db.SetEmbeddings(ctx, "f32-test", membrane.SensitivityHigh, []membrane.RecordVector{
		{ID: later.ID, Text: membrane.EmbedText(later), Vector: tenths()}}); err != nil {
		t.Fatal(err)
	}
	es, err := db.Embeddings(ctx, []string{r.ID, later.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := float64(float32(0.1))
	for name, id := range map[string]string{"with its record": r.ID, "by the embed job": later.ID} {
		var v []float64
		if len(es[id]) == 1 {
			v = es[id][0].Vector
		}
		if len(v) != testDims || v[0] != want || v[testDims-1] != want {
			t.Errorf("the vector stored %s reads back as %d values starting %v, want %d of %v", name, len(v), v[:min(len(v), 2)], testDims, want)
		}
	}
}

// TestEmbedMissingResumes: a run cut short by a failing model keeps the
// batches it stored and fails; the next run embeds only what is left.
func TestEmbedMissingResumes(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	neo4jtest.DeleteAtEnd(t, db, scope)
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

// TestSetEmbeddingsGuards: a vector is stored only when the text it embeds
// is still the record's, whatever version it was read with (a read torn by
// a revision's commit can pair a new version with the old text), and only
// for a record at most the given level.
func TestSetEmbeddingsGuards(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0, fact(scope, "a", 0.5, nil), sensitive(fact(scope, "b", 0.5, nil), membrane.SensitivityHigh))
	vec := make([]float64, testDims)
	vec[0] = 1
	text := membrane.EmbedText(recs[0])
	for _, tc := range []struct {
		name string
		v    membrane.RecordVector
		want int64
	}{
		{"the text of another version", membrane.RecordVector{ID: recs[0].ID, Text: text + " before", Vector: vec}, 0},
		{"above the level", membrane.RecordVector{ID: recs[1].ID, Text: membrane.EmbedText(recs[1]), Vector: vec}, 0},
		{"no such record", membrane.RecordVector{ID: "no-such-record", Text: text, Vector: vec}, 0},
		{"the record's text", membrane.RecordVector{ID: recs[0].ID, Text: text, Vector: vec}, 1},
	} {
		n, err := db.SetEmbeddings(ctx, "test-model", membrane.SensitivityMedium, []membrane.RecordVector{tc.v})
		if err != nil || n != tc.want {
			t.Errorf("%s: stored %d vectors (err %v), want %d", tc.name, n, err, tc.want)
		}
	}
	models, err := db.EmbeddingModels(ctx, []string{recs[0].ID, recs[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(models[recs[0].ID]) != 1 || len(models[recs[1].ID]) != 0 {
		t.Errorf("embeddings by record %v, want one on a and none on b", models)
	}
}

var _ membrane.Embedder = (*countingEmbedder)(nil)
var _ membrane.EmbedStore = (*neo4j.DB)(nil)
