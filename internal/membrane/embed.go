package membrane

import (
	"context"
	"fmt"
)

// Embedder turns texts into vectors with an embedding model. Vector search
// is optional: without an Embedder, retrieval ranks by full text alone.
type Embedder interface {
	// Embed returns one vector per text, each of Dimensions() numbers.
	Embed(ctx context.Context, texts []string) ([][]float64, error)
	// Dimensions is the length of every vector.
	Dimensions() int
	// Model names the embedding model; it is stored beside each vector so
	// that vectors of another model can be found and replaced.
	Model() string
}

// EmbedText is the text a record is embedded by: its payload's human text
// (SearchText).
func EmbedText(r *Record) string { return SearchText(r.Payload) }

// Embeddable reports whether r may be sent to the embedding service and
// its vector stored: only records at or below max (sensitive text must not
// leave for a third-party model, and a stored vector leaks what it embeds),
// with some text.
func Embeddable(r *Record, max Sensitivity) bool {
	return r.Sensitivity.Level() <= max.Level() && EmbedText(r) != ""
}

// EmbedStore is what the embed job needs from the database.
type EmbedStore interface {
	// Unembedded returns up to q.Limit records in id order after q.After,
	// at most q.Max sensitive, that have no embedding by q.Model.
	Unembedded(ctx context.Context, q UnembeddedQuery) ([]*Record, error)
	// SetEmbeddings stores each vector, by model, on its record when the
	// record's text (EmbedText) is still the one embedded and the record at
	// most max sensitive, replacing embeddings by other models; it returns
	// how many records got one.
	SetEmbeddings(ctx context.Context, model string, max Sensitivity, vecs []RecordVector) (int64, error)
}

// UnembeddedQuery selects a page of records without an embedding.
type UnembeddedQuery struct {
	After  string
	Limit  int
	Model  string
	Max    Sensitivity
	Scopes []string
}

// RecordVector is a record's embedding and the text it embeds (EmbedText
// of the record as read).
type RecordVector struct {
	ID     string
	Text   string
	Vector []float64
}

// EmbedMissing gives a vector to every record in reach that has none by
// e's model: records written before an embedder was configured, the new
// records of revisions, records written while the model failed, and records
// embedded by another model. It walks the records in id order a batch at a
// time, each batch committed on its own, so that a run cut short (shutdown,
// timeout, a failing model) keeps what it did and the next run goes on
// from what is still missing: a start never waits for it. Scanned counts
// the records looked at, Changed those that got a vector.
func EmbedMissing(ctx context.Context, store EmbedStore, e Embedder, max Sensitivity, o SweepOptions) (SweepResult, error) {
	var res SweepResult
	if e == nil {
		return res, Errorf(EINVALID, "no embedding model is configured (embedding.provider)")
	}
	q := UnembeddedQuery{Limit: embedBatch, Model: e.Model(), Max: max, Scopes: o.Scopes}
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		page, err := store.Unembedded(ctx, q)
		if err != nil {
			return res, err
		}
		if len(page) == 0 {
			return res, nil
		}
		res.Scanned += int64(len(page))
		q.After = page[len(page)-1].ID
		n, err := embedRecords(ctx, store, e, max, page)
		res.Changed += n
		if err != nil {
			return res, err
		}
	}
}

// embedRecords embeds the records of recs that may be embedded, in one
// call to e, and stores their vectors where the records still have the
// texts embedded (a record revised since keeps what it has): how many
// records got one.
func embedRecords(ctx context.Context, store EmbedStore, e Embedder, max Sensitivity, recs []*Record) (int64, error) {
	var todo []*Record
	var texts []string
	for _, r := range recs {
		if Embeddable(r, max) {
			todo = append(todo, r)
			texts = append(texts, EmbedText(r))
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("embedding %d records: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return 0, fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	out := make([]RecordVector, 0, len(todo))
	for i, r := range todo {
		if len(vecs[i]) != e.Dimensions() {
			return 0, fmt.Errorf("the embedding model returned a vector of %d numbers, not %d", len(vecs[i]), e.Dimensions())
		}
		out = append(out, RecordVector{ID: r.ID, Text: texts[i], Vector: vecs[i]})
	}
	return store.SetEmbeddings(ctx, e.Model(), max, out)
}
