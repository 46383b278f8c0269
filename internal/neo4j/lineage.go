package neo4j

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.LineageStore = (*DB)(nil)

var (
	asOfFragment = strings.ReplaceAll(cypher.Must("as_of"), "__EFFECTIVE__",
		// The effective salience statement, on the map h (the record with
		// its base and anchor as of $asOf) at $asOf. Fixed text only.
		strings.NewReplacer("WITH m,", "WITH h,", "m.", "h.", "$now", "$asOf").Replace(cypher.Must("effective_salience")))
	recordAsOf     = strings.ReplaceAll(cypher.Must("record_as_of"), "__AS_OF__", asOfFragment)
	neighborsStmt  = statesOf(cypher.Must("neighbors"))
	supersedeChain = statesOf(cypher.Must("supersede_chain"))
	lineageTmpl    = statesOf(cypher.Must("lineage"))
	graphTmpl      = statesOf(cypher.Must("graph"))
)

// states is a statement whose __AS_OF__ placeholder is filled both ways:
// with as_now.cypher for a read of the present and with the as-of fragment
// for a read at an instant. The present is most reads, and the as-of
// fragment costs it a look at every record's audit entries.
type states struct{ now, asOf string }

func statesOf(tmpl string) states {
	return states{
		now:  strings.ReplaceAll(tmpl, "__AS_OF__", cypher.Must("as_now")),
		asOf: strings.ReplaceAll(tmpl, "__AS_OF__", asOfFragment),
	}
}

// at is the statement for a read at asOf (nil: now).
func (s states) at(asOf *time.Time) string {
	if asOf == nil {
		return s.now
	}
	return s.asOf
}

// stateName names the state a read at asOf takes, for expanded variants.
func stateName(asOf bool) string {
	if asOf {
		return "asOf"
	}
	return "now"
}

// lineageArrows are the only texts __ARROW__ takes.
var lineageArrows = map[membrane.Direction]string{
	membrane.DirOut:  "-[r:$any($types)]->",
	membrane.DirIn:   "<-[r:$any($types)]-",
	membrane.DirBoth: "-[r:$any($types)]-",
}

// lineageWalks are the only texts __WALK__ takes (lineage.cypher,
// graph.cypher): the variable-length form of each arrow, its upper bound
// __MAXDEPTH__ (the graph's hops). The relationship types
// are a predicate on the path, not a type in the pattern: a parameter
// ($types) keeps one plan per direction and depth.
var lineageWalks = map[membrane.Direction]string{
	membrane.DirOut:  "-[*1..__MAXDEPTH__]->",
	membrane.DirIn:   "<-[*1..__MAXDEPTH__]-",
	membrane.DirBoth: "-[*1..__MAXDEPTH__]-",
}

// lineageStatement is the lineage statement in direction dir within
// maxDepth hops (both validated by the caller).
func lineageStatement(dir membrane.Direction, maxDepth int, asOf *time.Time) string {
	walk := strings.NewReplacer("__ARROW__", lineageArrows[dir], "__WALK__", lineageWalks[dir]).Replace(lineageTmpl.at(asOf))
	return strings.ReplaceAll(walk, "__MAXDEPTH__", strconv.Itoa(maxDepth))
}

func timeParam(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

func relTypes(preds []membrane.Predicate) []string {
	out := make([]string, len(preds))
	for i, p := range preds {
		out[i] = p.RelType()
	}
	return out
}

// FindRecordAsOf returns a record as it was at asOf.
func (db *DB) FindRecordAsOf(ctx context.Context, id string, asOf time.Time) (*membrane.Record, error) {
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.Record, error) {
		row, err := single(ctx, tx, recordAsOf, gated(ctx, map[string]any{"id": id, "asOf": asOf.UTC()}))
		if err != nil {
			return nil, err
		}
		var r *membrane.Record
		if row != nil {
			props, _ := row.Values[0].(map[string]any)
			if r, err = db.readRecord(props); err != nil {
				return nil, err
			}
		}
		if r == nil || view(ctx, r) == nil {
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q did not exist at %s", id, asOf.UTC().Format(time.RFC3339))
		}
		return view(ctx, r), nil
	})
}

func relationFrom(recordID string, m map[string]any, other string) (*membrane.Relation, bool) {
	out := m["outgoing"] == true
	rel := &membrane.Relation{
		Predicate: membrane.PredicateOfRelType(str(m["type"])),
		Weight:    float(m["weight"]),
		CreatedAt: tm(m["createdAt"]),
		Actor:     str(m["actor"]),
	}
	if out {
		rel.SourceID, rel.TargetID = recordID, other
	} else {
		rel.SourceID, rel.TargetID = other, recordID
	}
	return rel, out
}

// Neighbors returns a page of the related records of each id (an empty
// page for an id without any) in one round trip.
func (db *DB) Neighbors(ctx context.Context, ids []string, q membrane.NeighborQuery) (map[string]*membrane.NeighborPage, error) {
	var afterAt, afterID any
	if c := q.Page.After; c != nil {
		s, _ := c.Key.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || c.Field != "relation" {
			return nil, membrane.Errorf(membrane.EINVALID, "after is not a relations cursor")
		}
		afterAt, afterID = t, c.ID
	}
	params := gated(ctx, map[string]any{
		"ids": ids, "types": relTypes(q.Predicates),
		"out": q.Direction != membrane.DirIn, "in": q.Direction != membrane.DirOut,
		"asOf": timeParam(q.AsOf), "afterAt": afterAt, "afterId": afterID, "limit": int64(q.Page.First + 1),
	})
	out, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (map[string]*membrane.NeighborPage, error) {
		rows, err := collect(ctx, tx, neighborsStmt.at(q.AsOf), params)
		if err != nil {
			return nil, err
		}
		byID := make(map[string][]*membrane.Neighbor, len(ids))
		for _, row := range rows {
			rid, _ := row.Values[0].(string)
			relProps, _ := row.Values[1].(map[string]any)
			nodeProps, _ := row.Values[2].(map[string]any)
			rec, err := db.readRecord(nodeProps)
			if err != nil {
				return nil, err
			}
			if rec = view(ctx, rec); rec == nil {
				continue
			}
			rel, outgoing := relationFrom(rid, relProps, rec.ID)
			byID[rid] = append(byID[rid], &membrane.Neighbor{Relation: rel, Record: rec, Outgoing: outgoing})
		}
		out := make(map[string]*membrane.NeighborPage, len(ids))
		for _, id := range ids {
			out[id] = membrane.NewPageOf(byID[id], q.Page.First, neighborCursor)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neighbors of %d records: %w", len(ids), err)
	}
	return out, nil
}

// neighborCursor is a neighbour's position in a listing of relations: its
// edge's creation instant, then the neighbour's id.
func neighborCursor(n *membrane.Neighbor) membrane.Cursor {
	return membrane.Cursor{Key: n.Relation.CreatedAt.Format(time.RFC3339Nano), ID: n.Record.ID, Field: "relation"}
}

// SupersedeChains returns each record's supersede chain, oldest first.
func (db *DB) SupersedeChains(ctx context.Context, ids []string, asOf *time.Time) (map[string][]*membrane.Record, error) {
	params := gated(ctx, map[string]any{"ids": ids, "asOf": timeParam(asOf), "limit": int64(membrane.MaxChain)})
	out, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (map[string][]*membrane.Record, error) {
		rows, err := collect(ctx, tx, supersedeChain.at(asOf), params)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]*membrane.Record, len(ids))
		for _, row := range rows {
			rid, _ := row.Values[0].(string)
			chain, _ := row.Values[1].([]any)
			for _, c := range chain {
				props, _ := c.(map[string]any)
				r, err := db.readRecord(props)
				if err != nil {
					return nil, err
				}
				if r = view(ctx, r); r != nil {
					out[rid] = append(out[rid], r)
				}
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("supersede chains of %d records: %w", len(ids), err)
	}
	return out, nil
}

// Lineage returns the bounded lineage graph of a record in one round trip.
func (db *DB) Lineage(ctx context.Context, id string, q membrane.LineageQuery) (*membrane.Lineage, error) {
	if _, ok := lineageArrows[q.Direction]; !ok || q.MaxDepth < 1 || q.MaxDepth > membrane.MaxLineageDepth {
		return nil, membrane.Errorf(membrane.EINVALID, "invalid lineage query")
	}
	stmt := lineageStatement(q.Direction, q.MaxDepth, q.AsOf)
	params := gated(ctx, map[string]any{"id": id, "types": relTypes(q.Predicates), "asOf": timeParam(q.AsOf), "limit": int64(q.Limit + 1), "edgeLimit": int64(8 * (q.Limit + 1))})
	lin, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.Lineage, error) {
		row, err := single(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		if row == nil {
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		}
		return db.graphOf(ctx, row.Values[0], row.Values[1])
	})
	if err != nil {
		return nil, fmt.Errorf("lineage of %s: %w", id, err)
	}
	// The root plus up to Limit others were asked for; one more means the
	// limit cut the traversal.
	lin.Truncated = cut(lin, q.Limit+1)
	return lin, nil
}

// graphOf reads the nodes and edges a lineage or graph statement returns,
// as the request may see them.
func (db *DB) graphOf(ctx context.Context, nodes, edges any) (*membrane.Lineage, error) {
	g := &membrane.Lineage{}
	// Edges only among the nodes the request sees: the statements gate
	// what they traverse, and this keeps an edge from naming a record the
	// view below drops, should the two ever disagree.
	shown := map[string]bool{}
	ns, _ := nodes.([]any)
	for _, n := range ns {
		m, _ := n.(map[string]any)
		props, _ := m["node"].(map[string]any)
		rec, err := db.readRecord(props)
		if err != nil {
			return nil, err
		}
		if rec = view(ctx, rec); rec == nil {
			continue
		}
		g.Nodes = append(g.Nodes, &membrane.LineageNode{Record: rec, Depth: int(integer(m["depth"]))})
		shown[rec.ID] = true
	}
	es, _ := edges.([]any)
	for _, e := range es {
		m, _ := e.(map[string]any)
		if !shown[str(m["from"])] || !shown[str(m["to"])] {
			continue
		}
		g.Edges = append(g.Edges, &membrane.Relation{
			Predicate: membrane.PredicateOfRelType(str(m["type"])), SourceID: str(m["from"]), TargetID: str(m["to"]),
			Weight: float(m["weight"]), CreatedAt: tm(m["createdAt"]), Actor: str(m["actor"]),
		})
	}
	return g, nil
}

// cut keeps the first n nodes of g and the edges among them, and reports
// whether there were more.
func cut(g *membrane.Lineage, n int) bool {
	if len(g.Nodes) <= n {
		return false
	}
	g.Nodes = g.Nodes[:n]
	keep := map[string]bool{}
	for _, n := range g.Nodes {
		keep[n.Record.ID] = true
	}
	edges := g.Edges[:0]
	for _, e := range g.Edges {
		if keep[e.SourceID] && keep[e.TargetID] {
			edges = append(edges, e)
		}
	}
	g.Edges = edges
	return true
}
