package neo4j

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.RetrievalStore = (*DB)(nil)

// maxScan is the most matches one retrieval reads from an index when it
// scans further because the first scan left too few candidates.
const maxScan = 20_000

// Candidate statements: the hits fragment and the state (as it is, or as
// of an instant) are fixed texts chosen in Go.
var (
	retrieveStatements = func() map[string]string {
		stateNow := "WITH m, m AS v, text, vec, ctx, ent, der"
		stateAsOf := "CALL (m) {\n" + asOfFragment + "\n}\nWITH m, v, text, vec, ctx, ent, der"
		out := map[string]string{}
		for _, hits := range []string{"text", "vector", "browse"} {
			hitsFrag := cypher.Must("retrieve_hits_" + hits)
			if hits != "browse" {
				// The query is expanded in the same statement; sealed
				// records are matched by their blind terms.
				hitsFrag = cypher.Must("retrieve_expansion") + "\n" + hitsFrag + "\n" + cypher.Must("retrieve_hits_blind")
			}
			for state, frag := range map[string]string{"now": stateNow, "asOf": stateAsOf} {
				out[hits+"/"+state] = strings.NewReplacer(
					"__HITS__", hitsFrag,
					"__STATE__", frag,
				).Replace(cypher.Must("retrieve_candidates"))
			}
		}
		return out
	}()
	retrieveRecordsAsOf = strings.ReplaceAll(cypher.Must("retrieve_records_as_of"), "__AS_OF__", asOfFragment)
)

// Retrieve ranks records for q. Most retrievals are one statement (the
// candidates, with the records of the best), and that statement runs
// alone as an auto-commit transaction: one Bolt round trip. When its
// answer is not the whole retrieval (gating left fewer candidates than
// asked for and the index had more, so the statement must scan further;
// or ranking picked a record it did not return), the retrieval runs again
// in a read transaction, whose statements read one snapshot.
func (db *DB) Retrieve(ctx context.Context, q membrane.RetrieveQuery, threshold float64) (*membrane.Retrieval, error) {
	now := db.rankingInstant(q)
	q = q.WithTimeHint(now)
	first, err := readOnce(ctx, db, func(tx runner) (attempt, error) {
		r, whole, err := db.retrieve(ctx, tx, q, threshold, now, true)
		return attempt{r, whole}, err
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	if first.whole {
		return first.r, nil
	}
	out, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.Retrieval, error) {
		r, _, err := db.retrieve(ctx, tx, q, threshold, now, false)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	return out, nil
}

// attempt is a retrieval's first statement run alone: the retrieval when
// whole, else nothing (it takes more statements).
type attempt struct {
	r     *membrane.Retrieval
	whole bool
}

// rankingInstant is when decay and recency are measured: asOf, or now.
func (db *DB) rankingInstant(q membrane.RetrieveQuery) time.Time {
	switch {
	case q.AsOf != nil:
		return q.AsOf.UTC()
	case !q.Now.IsZero():
		return q.Now.UTC()
	}
	return db.Now().UTC()
}

// retrieve runs a retrieval in tx: the candidates statement, which also
// returns the records of the best, then (only if ranking in Go picked one
// it did not return) the missing records. With alone, tx runs one
// statement only (readOnce): the retrieval is not whole, and nil, when it
// needs another.
func (db *DB) retrieve(ctx context.Context, tx runner, q membrane.RetrieveQuery, threshold float64, now time.Time, alone bool) (*membrane.Retrieval, bool, error) {
	cands, best, top, whole, err := db.candidates(ctx, tx, q, now, alone)
	if err != nil || !whole {
		return nil, false, err
	}
	r, missing := membrane.Finish(q, cands, best, top, threshold, now)
	if len(missing) > 0 && alone {
		return nil, false, nil
	}
	if len(missing) > 0 {
		stmt := cypher.Must("retrieve_records")
		if q.AsOf != nil {
			stmt = retrieveRecordsAsOf
		}
		recs, err := db.recordsIn(ctx, tx, stmt, gated(ctx, map[string]any{"ids": missing, "asOf": timeParam(q.AsOf)}), q.AsOf)
		if err != nil {
			return nil, false, err
		}
		r.Complete(recs, threshold, now)
	}
	return r, true, nil
}

// candidates reads the candidates of q, the best text score and the best
// fused score among them, scanning further (up to maxScan matches) while
// the index returned as many matches as were asked for but gating and
// filters left fewer candidates than q.Limit. With alone it runs one
// statement: the candidates are not whole when it would scan further.
func (db *DB) candidates(ctx context.Context, tx runner, q membrane.RetrieveQuery, now time.Time, alone bool) (cands []membrane.Candidate, best, top float64, whole bool, err error) {
	if q.Unmatchable() {
		// Only stop words: nothing to search for, and no browsing either.
		return nil, 0, 0, true, nil
	}
	scopes, scoped := searchScopes(ctx, q.Scopes)
	if scoped && len(scopes) == 0 {
		// The scopes filter names none the caller may see: no record
		// passes the gate, so there is nothing to read.
		return nil, 0, 0, true, nil
	}
	hits := "browse"
	switch {
	case len(q.Vector) > 0:
		hits = "vector"
	case len(q.Terms) > 0:
		hits = "text"
	}
	state := "now"
	if q.AsOf != nil {
		state = "asOf"
	}
	stmt := retrieveStatements[hits+"/"+state]
	w, f := q.Weights(), membrane.Fusion
	layerRank := map[string]any{}
	for _, t := range membrane.MemoryTypes {
		layerRank[string(t)] = int64(membrane.LayerIndex(t))
	}
	params := gated(ctx, map[string]any{
		"layers": stringsOf(q.Layers), "minSalience": q.MinSalience, "nowMs": now.UnixMilli(),
		"vector": nil, "vectorIndex": nil, "tags": nil,
		"wRelevance": w.Relevance, "wSalience": w.Salience, "wRecency": w.Recency, "wConfidence": w.Confidence,
		"recencyHalfLifeMs": float64(membrane.RecencyHalfLife.Milliseconds()),
		"layerRank":         layerRank, "limit": int64(q.FetchLimit()), "selectLimit": int64(membrane.MaxSelectionCandidates),
		"seeds": int64(membrane.ContextSeeds), "fanout": int64(membrane.ContextFanout), "fanoutScan": int64(membrane.ContextFanoutScan), "secondHop": membrane.SecondHop, "contextNorm": membrane.ContextNorm,
		"contextAfter": membrane.ContextAfter, "contextBefore": membrane.ContextBefore, "entityFanIn": membrane.EntityFanIn, "entityFloor": membrane.EntityFloor,
		"fText": f.Text, "fVector": f.Vector, "fContext": f.Context, "fEntity": f.Entity, "fDerived": f.Derived,
		"fTime": f.Time, "fTotal": f.Total(q), "timeFrom": nil, "timeTo": nil, "timeWidthMs": nil,
	})
	maps.Copy(params, expansionParams(q, scopes, scoped))
	params["blindLucene"] = db.blindLucene(ctx, q, scopes, scoped)
	if len(q.Tags) > 0 {
		params["tags"] = q.Tags
	}
	if !q.Time.Empty() {
		params["timeFrom"], params["timeTo"] = q.Time.From.UnixMilli(), q.Time.To.UnixMilli()
		params["timeWidthMs"] = float64(q.Time.Width().Milliseconds())
	}
	if len(q.Vector) > 0 {
		params["vector"], params["vectorIndex"] = q.Vector, VectorIndexName(len(q.Vector))
	}
	for scan := q.ScanLimit(); ; scan *= 8 {
		params["scan"] = int64(scan)
		params["vectorScan"] = int64(min(q.VectorScanLimit(), scan))
		row, err := single(ctx, tx, stmt, params)
		if err != nil {
			return nil, 0, 0, false, err
		}
		raw, _ := row.Values[0].(int64)
		best, top := float(row.Values[1]), float(row.Values[2])
		rows, _ := row.Values[3].([]any)
		if len(rows) >= q.Limit || raw < int64(scan) || scan >= maxScan || hits == "browse" {
			cands, err := db.candidateRows(ctx, rows, q.AsOf)
			return cands, best, top, err == nil, err
		}
		if alone {
			return nil, 0, 0, false, nil
		}
	}
}

func (db *DB) candidateRows(ctx context.Context, rows []any, asOf *time.Time) ([]membrane.Candidate, error) {
	out := make([]membrane.Candidate, 0, len(rows))
	for _, x := range rows {
		m, _ := x.(map[string]any)
		c := membrane.Candidate{
			ID: str(m["id"]), Type: membrane.MemoryType(str(m["type"])), Text: float(m["text"]),
			Salience: float(m["salience"]), Confidence: float(m["confidence"]), CreatedAt: tm(m["createdAt"]),
			Context: float(m["context"]), Entity: float(m["entity"]), Derived: float(m["derived"]), At: tm(m["at"]),
		}
		if v, ok := m["vec"].(float64); ok {
			c.Vector = &v
		}
		if props, ok := m["props"].(map[string]any); ok {
			if k, ok := props["sessionKey"].(string); ok && k != "" {
				c.Session = str(props["scope"]) + "\x00" + k
			}
			r, err := db.recordFromProps(props)
			if errors.Is(err, errUnopened) {
				// Sealed under a key this server lacks, or a changed key
				// (its caption or its blind terms matched): it cannot be
				// shown, and it must not fail the retrieval of the others.
				continue
			}
			if err != nil {
				return nil, err
			}
			r.AsOf = asOf
			// Candidates are records seen in full; the view is the last word.
			c.Loaded = view(ctx, r)
		}
		out = append(out, c)
	}
	return out, nil
}

// recordsIn runs a statement returning one record per row and returns
// those the request may see, keyed by id.
func (db *DB) recordsIn(ctx context.Context, tx runner, stmt string, params map[string]any, asOf *time.Time) (map[string]*membrane.Record, error) {
	rows, err := collect(ctx, tx, stmt, params)
	if err != nil {
		return nil, err
	}
	recs, err := db.visibleRows(ctx, rows, asOf)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*membrane.Record, len(recs))
	for _, r := range recs {
		out[r.ID] = r
	}
	return out, nil
}

// RetrieveGraph ranks roots and expands their neighbourhood breadth first,
// one statement per hop, all in one read transaction: at most MaxHops + 2
// statements (+1 when the candidates scan further).
func (db *DB) RetrieveGraph(ctx context.Context, g membrane.GraphQuery, threshold float64) (*membrane.GraphRetrieval, error) {
	now := db.rankingInstant(g.Roots)
	g.Roots = g.Roots.WithTimeHint(now)
	t := membrane.TrustFromContext(ctx)
	out, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.GraphRetrieval, error) {
		r, _, err := db.retrieve(ctx, tx, g.Roots, threshold, now, false)
		if err != nil {
			return nil, err
		}
		gr := &membrane.GraphRetrieval{Selection: r.Selection}
		seen := map[string]*membrane.GraphNode{}
		var frontier []string
		for i := range r.Hits {
			h := &r.Hits[i]
			n := &membrane.GraphNode{Record: h.Record, Root: true, Hit: h}
			gr.Nodes = append(gr.Nodes, n)
			seen[h.ID] = n
			frontier = append(frontier, h.ID)
		}
		edgeSeen := map[string]bool{}
		types := relTypes(membrane.Predicates)
		for hop := 1; hop <= g.MaxHops && len(frontier) > 0; hop++ {
			ids := make([]string, 0, len(seen))
			for id := range seen {
				ids = append(ids, id)
			}
			row, err := single(ctx, tx, cypher.Must("retrieve_graph_hop"), gated(ctx, map[string]any{
				"frontier": frontier, "types": types, "seen": ids, "budget": int64(g.NodeLimit - len(seen)),
				"fanout": int64(g.Fanout()), "rowLimit": int64(4 * g.Fanout()),
			}))
			if err != nil {
				return nil, err
			}
			edges, _ := row.Values[0].([]any)
			nodes, _ := row.Values[1].([]any)
			if more, _ := row.Values[2].(bool); more {
				gr.Truncated = true
			}
			var next []*membrane.GraphNode
			for _, x := range nodes {
				props, _ := x.(map[string]any)
				rec, err := db.readRecord(props)
				if err != nil {
					return nil, err
				}
				if rec = t.View(rec); rec == nil || seen[rec.ID] != nil {
					continue
				}
				n := &membrane.GraphNode{Record: rec, Hop: hop}
				seen[rec.ID] = n
				next = append(next, n)
			}
			for _, x := range edges {
				m, _ := x.(map[string]any)
				from, to := str(m["from"]), str(m["to"])
				if seen[to] == nil {
					continue
				}
				e := &membrane.Relation{Predicate: membrane.PredicateOfRelType(str(m["type"])), Weight: float(m["weight"]),
					CreatedAt: tm(m["createdAt"]), Actor: str(m["actor"]), SourceID: from, TargetID: to}
				if m["outgoing"] != true {
					e.SourceID, e.TargetID = to, from
				}
				key := e.SourceID + "\x00" + string(e.Predicate) + "\x00" + e.TargetID
				if edgeSeen[key] {
					continue
				}
				if len(gr.Edges) >= g.EdgeLimit {
					gr.Truncated = true
					continue
				}
				edgeSeen[key] = true
				gr.Edges = append(gr.Edges, e)
			}
			// Neighbours of a hop in a stable order: most salient first.
			slices.SortStableFunc(next, func(a, b *membrane.GraphNode) int {
				if a.Record.Salience != b.Record.Salience {
					if a.Record.Salience > b.Record.Salience {
						return -1
					}
					return 1
				}
				return strings.Compare(a.Record.ID, b.Record.ID)
			})
			frontier = frontier[:0]
			for _, n := range next {
				gr.Nodes = append(gr.Nodes, n)
				// Only records seen in full are expanded further.
				if !n.Record.Redacted {
					frontier = append(frontier, n.Record.ID)
				}
			}
		}
		return gr, nil
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve graph: %w", err)
	}
	return out, nil
}

// VectorIndexName is the vector index for embeddings of dims dimensions.
func VectorIndexName(dims int) string { return fmt.Sprintf("memory_embedding_%d", dims) }

// EnsureVectorIndex creates the vector index of dims-dimensional
// embeddings if it does not exist and waits for it to come online.
func (db *DB) EnsureVectorIndex(ctx context.Context, dims int) error {
	if dims < 1 || dims > 4096 {
		return fmt.Errorf("vector index: dimensions must be 1 to 4096, got %d", dims)
	}
	// As the schema at start: replicas starting together race to create
	// it, which schemaStatement retries.
	for _, s := range []string{vectorIndexStatement(dims), cypher.Must("await_indexes")} {
		if err := db.schemaStatement(ctx, s); err != nil {
			return fmt.Errorf("vector index: %w", err)
		}
	}
	rows, err := autocommit(ctx, db, cypher.Must("vector_indexes"), nil)
	if err != nil {
		return fmt.Errorf("vector index: %w", err)
	}
	want := VectorIndexName(dims)
	var names, others []string
	for _, r := range rows {
		name, _ := r.Get("name")
		d, _ := r.Get("dims")
		if name == want {
			return nil
		}
		names = append(names, fmt.Sprint(name))
		others = append(others, fmt.Sprintf("%v (%v dimensions)", name, d))
	}
	if len(names) == 0 {
		return fmt.Errorf("vector index: %s was not created", want)
	}
	// Neo4j indexes one vector property of a label once: the index of
	// another model's embeddings (other dimensions) takes its place, and
	// every retrieval with a query vector would fail on the missing index.
	return fmt.Errorf("vector index: the embedder has %d dimensions, but the database indexes the embeddings of another model: %s; "+
		"to switch models, drop it (DROP INDEX %s) and restart (docs/retrieval.md, \"Vector search\")",
		dims, strings.Join(others, ", "), strings.Join(names, ", "))
}

// vectorIndexStatement creates the vector index of dims dimensions
// (validated by the caller).
func vectorIndexStatement(dims int) string {
	return strings.ReplaceAll(cypher.Must("vector_index"), "__DIMS__", strconv.Itoa(dims))
}

// AwaitSearchIndexes waits until the eventually consistent full-text index
// reflects every committed write, so that a search right after a write
// finds it (tests, the retrieval eval).
func (db *DB) AwaitSearchIndexes(ctx context.Context) error {
	_, err := neo4j.ExecuteQuery(ctx, db.driver, cypher.Must("await_search"), nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(db.database))
	if err != nil {
		return fmt.Errorf("await search indexes: %w", err)
	}
	return nil
}

// blindLucene is the query of the blind index for q (retrieve_hits_blind),
// restricted to the scopes the request searches when scoped (as
// textLucene), or nil without query terms (see blindQuery).
func (db *DB) blindLucene(ctx context.Context, q membrane.RetrieveQuery, scopes []string, scoped bool) any {
	toks := db.blindQuery(ctx, q.Terms)
	if toks == nil || !scoped {
		return toks
	}
	return scopedLucene(toks.(string), scopes)
}

// blindQuery is the memory_blind query for analysed search terms (of
// retrieve, or of the records text filter): the terms as keyed tokens under
// every configured key, any of them. It is nil, and the index not queried,
// without terms or when the request's ceiling does not reach sealed
// records: such a request can never see one, so it never touches their
// tokens.
func (db *DB) blindQuery(ctx context.Context, terms []string) any {
	if len(terms) == 0 || !db.sealer.Searchable(membrane.TrustFromContext(ctx).Ceiling) {
		return nil
	}
	toks := db.sealer.BlindQuery(terms)
	if len(toks) == 0 {
		return nil
	}
	return strings.Join(toks, " ")
}

// expansionParams are the parameters of retrieve_expansion.cypher, which
// expands q's full-text query with the words of its best match in the
// candidates statement itself (membrane.Expansion): the request's filters
// it shares with the candidates ($scopes, $asOf, $includeRetracted; its
// gate is theirs, with gated's trust parameters), $lucene, the
// query's own terms (textLucene), which the feedback reads, and the
// expanded query's text before and after the lent words,
// expandedLuceneQuery (inside scopedLucene when scoped). Without
// terms $lucene is empty: nothing is read or expanded. The query vector is
// not expanded (tried with the match's embedding and not kept:
// docs/retrieval.md, "Query expansion").
func expansionParams(q membrane.RetrieveQuery, scopes []string, scoped bool) map[string]any {
	terms := q.Terms
	if terms == nil {
		terms = []string{}
	}
	var filter any // no scopes filter: null, not an empty list
	if q.Scopes != nil {
		filter = q.Scopes
	}
	head, tail := requiredLucene(q.Terms), ""
	if scoped && head != "" {
		before, after := scopedLuceneAround(scopes)
		head, tail = before+head, after
	}
	return map[string]any{
		"scopes": filter, "asOf": timeParam(q.AsOf), "includeRetracted": q.IncludeRetracted,
		"lucene": textLucene(q.Terms, scopes, scoped), "luceneHead": head, "luceneTail": tail, "queryTerms": terms,
		"feedbackScan": int64(membrane.FeedbackScan), "feedbackDocs": int64(membrane.FeedbackDocs), "feedbackDocTerms": int64(membrane.FeedbackDocTerms),
		"feedbackTerms": int64(membrane.FeedbackTerms), "feedbackWeight": membrane.FeedbackWeight,
		"feedbackWord": membrane.FeedbackWordPattern,
	}
}
