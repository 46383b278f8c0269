package membrane

import "context"

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
