package neo4j

import (
	"context"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// mentionLimit bounds the entities one record is linked to by its text.
const mentionLimit = 25

var linkMentionsStmt = cypher.Must("link_mentions")

// linkMentions links recs, created in tx, to the entities of their scopes
// that their text names (link_mentions.cypher): the entities already
// stored and those among recs. Entities themselves, sealed records (whose
// text is not the store's to read) and records without text are not
// linked.
func (db *DB) linkMentions(ctx context.Context, tx neo4j.ManagedTransaction, recs []*membrane.Record) error {
	batch := map[string]map[string][]string{} // scope -> entity id -> its terms
	for _, r := range recs {
		if e, ok := r.Payload.(*membrane.EntityPayload); ok && !db.sealer.Required(r.Sensitivity) {
			if batch[r.Scope] == nil {
				batch[r.Scope] = map[string][]string{}
			}
			batch[r.Scope][r.ID] = membrane.EntityTerms(e)
		}
	}
	var rows []map[string]any
	for _, r := range recs {
		if r.Type == membrane.TypeEntity || db.sealer.Required(r.Sensitivity) {
			continue
		}
		names := membrane.MentionCandidates(membrane.EmbedText(r))
		if len(names) == 0 {
			continue
		}
		inBatch := membrane.Mentioned(names, batch[r.Scope])
		if inBatch == nil {
			inBatch = []string{}
		}
		rows = append(rows, map[string]any{"id": r.ID, "scope": r.Scope, "names": names,
			"query": entityQuery(r.Scope, names), "batch": inBatch})
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := collect(ctx, tx, linkMentionsStmt, gated(ctx, map[string]any{"records": rows, "limit": int64(mentionLimit)}))
	return err
}
