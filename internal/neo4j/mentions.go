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
	// maxEntitiesReadWhole bounds entitiesReadWhole: the most entities
	// link_mentions_scope collects for one scope.
	maxEntitiesReadWhole = 1000
)

// entitiesReadWhole is the most entities of a scope that linkMentions
// reads whole to find those that texts of up to names candidate names
// (membrane.MentionCandidates) mention; a scope of more has the names
// looked up in its index instead. Timed apart on the test Neo4j, reading
// an entity cost about 16 us and looking up a name that is no entity's
// about 11.5 us (one that is costs more), so: two thirds of names, at
// least 16 (a scope of a few entities is read whole even for a short
// text: one index term, not a query of many), at most
// maxEntitiesReadWhole (with 5,000, a batch in a scope of 3,000 entities
// wrote slower than by name). BenchmarkMentionLinking ([S8] in
// docs/BENCHMARKS.md) measures the choice end to end.
func entitiesReadWhole(names int) int {
	return min(maxEntitiesReadWhole, max(16, names*2/3))
}

var (
	linkMentionsScopeStmt = cypher.Must("link_mentions_scope")
	linkMentionsStmt      = cypher.Must("link_mentions")
	mentionsCreateStmt    = cypher.Must("mentions_create")
)

// mentioned is an entity a record may name: its id and sensitivity level.
type mentioned struct {
	id    string
	level int
}

// linkMentions links recs, created in tx, to the entities of their scopes
// that their text names (membrane.MentionCandidates): the entities already
// stored and those among recs, each at least as sensitive as the record
// (whoever sees the entity in full then sees the record in full, so the
// edge tells no reader who sees the record redacted a name its text
// holds), at most mentionLimit per record (mentions_create). The stored
// ones of a scope of few entities (entitiesReadWhole: fewer than
// the names its texts may hold) are read whole (link_mentions_scope); in a
// scope of more, the names the texts may hold are looked up (link_mentions,
// one index query per thousand names, never one per record). A text's
// names are listed only when its scope has an entity. Entities
// themselves, sealed records (whose text is not the store's to read) and
// records without text are not linked.
func (db *DB) linkMentions(ctx context.Context, tx neo4j.ManagedTransaction, recs []*membrane.Record) error {
	// scope -> term -> the entities it names.
	terms := map[string]map[string][]mentioned{}
	add := func(scope, term string, e mentioned) {
		if terms[scope] == nil {
			terms[scope] = map[string][]mentioned{}
		}
		terms[scope][term] = append(terms[scope][term], e)
	}
	// addRow adds a row of link_mentions_scope or link_mentions: scope,
	// id, terms, level.
	addRow := func(v []any) {
		e := mentioned{id: str(v[1]), level: int(integer(v[3]))}
		list, _ := v[2].([]any)
		for _, t := range list {
			add(str(v[0]), str(t), e)
		}
	}
	type text struct {
		r    *membrane.Record
		text string
	}
	var texts []text
	names := map[string]int{} // scope -> at most how many names its texts hold
	for _, r := range recs {
		if db.sealer.Required(r.Sensitivity) {
			continue
		}
		if r.Type == membrane.TypeEntity {
			// The batch's own entities, not in the index yet.
			if p, ok := r.Payload.(*membrane.EntityPayload); ok {
				for _, t := range membrane.EntityTerms(p) {
					add(r.Scope, t, mentioned{id: r.ID, level: r.Sensitivity.Level()})
				}
			}
			continue
		}
		t := membrane.EmbedText(r)
		if n := membrane.MentionCandidatesAtMost(t); n > 0 {
			texts = append(texts, text{r, t})
			names[r.Scope] += n
		}
	}
	if len(texts) == 0 {
		return nil
	}
	var lookups []map[string]any
	for _, scope := range slices.Sorted(maps.Keys(names)) {
		few := entitiesReadWhole(names[scope])
		if db.scopeEntities > 0 {
			few = db.scopeEntities
		}
		lookups = append(lookups, map[string]any{"scope": scope, "query": scopeEntitiesQuery(scope), "few": int64(few)})
	}
	rows, err := collect(ctx, tx, linkMentionsScopeStmt, gated(ctx, map[string]any{"lookups": lookups}))
	if err != nil {
		return err
	}
	large := map[string]bool{} // scopes of more entities than read whole
	for _, row := range rows {
		if row.Values[1] == nil {
			large[str(row.Values[0])] = true
			continue
		}
		addRow(row.Values)
	}

	type named struct {
		r     *membrane.Record
		names []string
	}
	var todo []named
	lookUp := map[string]map[string]bool{} // large scope -> the names to look up
	for _, t := range texts {
		r := t.r
		if terms[r.Scope] == nil && !large[r.Scope] {
			continue
		}
		candidates := membrane.MentionCandidates(t.text)
		if len(candidates) == 0 {
			continue
		}
		todo = append(todo, named{r, candidates})
		if large[r.Scope] {
			if lookUp[r.Scope] == nil {
				lookUp[r.Scope] = map[string]bool{}
			}
			for _, n := range candidates {
				lookUp[r.Scope][n] = true
			}
		}
	}
	if len(lookUp) > 0 {
		var queries []map[string]any
		for _, scope := range slices.Sorted(maps.Keys(lookUp)) {
			for chunk := range slices.Chunk(slices.Sorted(maps.Keys(lookUp[scope])), mentionQueryNames) {
				queries = append(queries, map[string]any{"scope": scope, "query": entityQuery(scope, chunk)})
			}
		}
		rows, err := collect(ctx, tx, linkMentionsStmt, gated(ctx, map[string]any{"queries": queries, "limit": int64(mentionQueryHits)}))
		if err != nil {
			return err
		}
		for _, row := range rows {
			addRow(row.Values)
		}
	}

	var edges []map[string]any
	for _, n := range todo {
		seen := map[string]bool{}
	record:
		for _, name := range n.names {
			for _, e := range terms[n.r.Scope][name] {
				if len(seen) == mentionLimit {
					break record
				}
				if seen[e.id] || e.level < n.r.Sensitivity.Level() {
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
