package neo4j

import (
	"context"
	"maps"
	"slices"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

const (
	// mentionLimit bounds the entities one record is linked to by its text.
	mentionLimit = 25
	// mentionQueryNames bounds the names of one entity_name_terms query
	// (Lucene refuses more than 1,024 clauses).
	mentionQueryNames = 1000
	// mentionQueryHits bounds the entities one query returns.
	mentionQueryHits = 10000
)

var (
	linkMentionsStmt   = cypher.Must("link_mentions")
	mentionsCreateStmt = cypher.Must("mentions_create")
)

// mentioned is an entity a record may name: its id and sensitivity level.
type mentioned struct {
	id    string
	level int
}

// linkMentions links recs, created in tx, to the entities of their scopes
// that their text names (membrane.MentionCandidates): the entities already
// stored (link_mentions, one index query per scope and thousand names, not
// one per record) and those among recs, each at least as sensitive as the
// record (whoever sees the entity in full then sees the record in full, so
// the edge tells no reader who sees the record redacted a name its text
// holds), at most mentionLimit per record (mentions_create). Entities
// themselves, sealed records (whose text is not the store's to read) and
// records without text are not linked.
func (db *DB) linkMentions(ctx context.Context, tx neo4j.ManagedTransaction, recs []*membrane.Record) error {
	type named struct {
		r     *membrane.Record
		names []string
	}
	var todo []named
	byScope := map[string]map[string]bool{}
	for _, r := range recs {
		if r.Type == membrane.TypeEntity || db.sealer.Required(r.Sensitivity) {
			continue
		}
		names := membrane.MentionCandidates(membrane.EmbedText(r))
		if len(names) == 0 {
			continue
		}
		todo = append(todo, named{r, names})
		if byScope[r.Scope] == nil {
			byScope[r.Scope] = map[string]bool{}
		}
		for _, n := range names {
			byScope[r.Scope][n] = true
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// scope -> term -> the entities it names.
	terms := map[string]map[string][]mentioned{}
	add := func(scope, term string, e mentioned) {
		if terms[scope] == nil {
			terms[scope] = map[string][]mentioned{}
		}
		terms[scope][term] = append(terms[scope][term], e)
	}
	var queries []map[string]any
	for _, scope := range slices.Sorted(maps.Keys(byScope)) {
		names := slices.Sorted(maps.Keys(byScope[scope]))
		for chunk := range slices.Chunk(names, mentionQueryNames) {
			queries = append(queries, map[string]any{"scope": scope, "query": entityQuery(scope, chunk)})
		}
	}
	rows, err := collect(ctx, tx, linkMentionsStmt, gated(ctx, map[string]any{"queries": queries, "limit": int64(mentionQueryHits)}))
	if err != nil {
		return err
	}
	for _, row := range rows {
		e := mentioned{id: str(row.Values[0]), level: int(integer(row.Values[3]))}
		ts, _ := row.Values[2].([]any)
		for _, t := range ts {
			add(str(row.Values[1]), str(t), e)
		}
	}
	// The batch's own entities, not in the index yet.
	for _, r := range recs {
		if p, ok := r.Payload.(*membrane.EntityPayload); ok && !db.sealer.Required(r.Sensitivity) {
			for _, t := range membrane.EntityTerms(p) {
				add(r.Scope, t, mentioned{id: r.ID, level: r.Sensitivity.Level()})
			}
		}
	}
	var edges []map[string]any
	for _, n := range todo {
		seen := map[string]bool{}
		for _, name := range n.names {
			for _, e := range terms[n.r.Scope][name] {
				if seen[e.id] || e.level < n.r.Sensitivity.Level() || len(seen) == mentionLimit {
					continue
				}
				seen[e.id] = true
				edges = append(edges, map[string]any{"from": n.r.ID, "to": e.id})
			}
		}
	}
	if len(edges) == 0 {
		return nil
	}
	_, err = collect(ctx, tx, mentionsCreateStmt, map[string]any{"edges": edges})
	return err
}
