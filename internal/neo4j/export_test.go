package neo4j

import (
	"context"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// The full-text query builders (lucene.go), for their table tests.
var (
	LuceneQuery         = luceneQuery
	RequiredLucene      = requiredLucene
	ExpandedLuceneQuery = expandedLuceneQuery
	FormatBoost         = formatBoost
	ScopedLucene        = scopedLucene
	SearchScopes        = searchScopes
)

// TrustParams exposes trustParams: the gate's parameters of a trust.
var TrustParams = trustParams

// CommitUncertain exposes commitUncertain to the external tests, which
// classify real driver errors with it.
var CommitUncertain = commitUncertain

// SetTextMatches sets the most full-text matches a records text filter
// reads (membrane.MaxTextMatches by default), so that a test can reach the
// bound with a few records.
func SetTextMatches(db *DB, n int) { db.textMatches = n }

// SetScopeEntities sets the most entities of a scope that the linking of
// mentions at write reads whole (beyond them it looks the text's names
// up), so that a test reaches the lookup with a few entities.
func SetScopeEntities(db *DB, n int) { db.scopeEntities = n }

// EntitiesReadWhole exposes the choice of reading a scope's entities
// whole, for its table test.
var EntitiesReadWhole = entitiesReadWhole

// MaxEntitiesReadWhole is maxEntitiesReadWhole, its bound.
const MaxEntitiesReadWhole = maxEntitiesReadWhole

// SetMaxAuditRefs sets the most references a prune tombstone stores
// (membrane.MaxAuditRefs by default), so that a test reaches the bound
// with a few edges.
func SetMaxAuditRefs(db *DB, n int) { db.maxAuditRefs = n }

// SetBeforeReviseWrite makes db call f in every run of a revision but the
// last, locked one, between its read and its guarded write, with the run's
// number (from 1), so that a test writes there what a concurrent request
// could.
func SetBeforeReviseWrite(db *DB, f func(attempt int)) { db.beforeReviseWrite = f }

// MapError exposes mapError, so that a table test classifies real server
// errors with it.
var MapError = mapError

// BlindTermsIn runs Migrate's blind terms re-index over the sealed records
// of scopes only (the test database is shared), and returns what it
// rewrote and skipped.
func (db *DB) BlindTermsIn(ctx context.Context, scopes []string) (int, int, error) {
	return db.reindexBlind(ctx, scopes)
}

// SetSchemaNode makes db keep its schema version on the MembraneSchema
// node id and look for data in the records of scopes only, so that a test
// stands in for a database of its own: the shared database has one user
// database, whose real node other packages' starts read.
func SetSchemaNode(db *DB, id string, scopes []string) {
	db.schemaNode, db.dataScopes = id, scopes
}

// ExpansionOf runs the query expansion of q (retrieve_expansion.cypher)
// alone, with the parameters the candidates statement gives it, and
// returns the feedback documents it read (best first) and the full-text
// query it built.
func (db *DB) ExpansionOf(ctx context.Context, q membrane.RetrieveQuery) ([]membrane.FeedbackDoc, string, error) {
	scopes, scoped := searchScopes(ctx, q.Scopes)
	params := gated(ctx, expansionParams(q, scopes, scoped))
	type out struct {
		docs   []membrane.FeedbackDoc
		lucene string
	}
	o, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (out, error) {
		row, err := single(ctx, tx, cypher.Must("retrieve_expansion")+"\nRETURN read, scores, lucene", params)
		if err != nil {
			return out{}, err
		}
		read, _ := row.Values[0].([]any)
		scores, _ := row.Values[1].([]any)
		var o out
		for i, d := range read {
			var terms []string
			for _, t := range d.([]any) {
				terms = append(terms, t.(string))
			}
			o.docs = append(o.docs, membrane.FeedbackDoc{Terms: terms, Score: scores[i].(float64)})
		}
		o.lucene, _ = row.Values[2].(string)
		return o, nil
	})
	return o.docs, o.lucene, err
}

// CreateRows exposes createRows: the rows CreateRecords sends, so that a
// benchmark writes exactly the same data with other statements.
func (db *DB) CreateRows(recs []*membrane.Ingested) ([]map[string]any, error) {
	return db.createRows(recs)
}

// AuditProps exposes auditProps: the properties an audit entry is stored
// with, so that a benchmark writes an entry of the same size by hand.
func (db *DB) AuditProps(a *membrane.AuditEntry, sens membrane.Sensitivity) (map[string]any, error) {
	return db.auditProps(a, sens)
}

// CandidatesOf runs q's candidates statement alone, at the ranking
// instant now, and returns its rows in the statement's order (the order
// its own copy of the score gives) with the best text and fused scores.
func (db *DB) CandidatesOf(ctx context.Context, q membrane.RetrieveQuery, now time.Time) ([]membrane.Candidate, float64, float64, error) {
	type out struct {
		cands     []membrane.Candidate
		best, top float64
	}
	q = q.WithTimeHint(now)
	o, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (out, error) {
		c, best, top, _, err := db.candidates(ctx, tx, q, now, false)
		return out{c, best, top}, err
	})
	return o.cands, o.best, o.top, err
}

// Embedding is one MemoryVector node of a record, as stored.
type Embedding struct {
	Model  string
	Vector []float64
}

// Embeddings returns, by record id, the embeddings the records of ids
// have (one entry per MemoryVector node).
func (db *DB) Embeddings(ctx context.Context, ids []string) (map[string][]Embedding, error) {
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (map[string][]Embedding, error) {
		rows, err := collect(ctx, tx, `MATCH (m:Memory)-[:HAS_EMBEDDING]->(v:MemoryVector) WHERE m.id IN $ids
RETURN m.id, v.model, v.vector`, map[string]any{"ids": ids})
		if err != nil {
			return nil, err
		}
		out := map[string][]Embedding{}
		for _, row := range rows {
			id, _ := row.Values[0].(string)
			e := Embedding{}
			e.Model, _ = row.Values[1].(string)
			xs, _ := row.Values[2].([]any)
			for _, x := range xs {
				f, _ := x.(float64)
				e.Vector = append(e.Vector, f)
			}
			out[id] = append(out[id], e)
		}
		return out, nil
	})
}

// EmbeddingModels returns, by record id, the model of each embedding the
// records of ids have (one entry per MemoryVector node).
func (db *DB) EmbeddingModels(ctx context.Context, ids []string) (map[string][]string, error) {
	es, err := db.Embeddings(ctx, ids)
	out := map[string][]string{}
	for id, list := range es {
		for _, e := range list {
			out[id] = append(out[id], e.Model)
		}
	}
	return out, err
}
