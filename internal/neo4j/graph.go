package neo4j

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// graphStatement is the graph statement in direction dir within hops (both
// validated by the caller), at asOf (nil: now).
func graphStatement(dir membrane.Direction, hops int, asOf *time.Time) string {
	walk := strings.NewReplacer("__ARROW__", lineageArrows[dir], "__WALK__", lineageWalks[dir]).Replace(graphTmpl.at(asOf))
	return strings.ReplaceAll(strings.ReplaceAll(walk, "__MAXDEPTH__", strconv.Itoa(hops)), "__HOPS__", strconv.Itoa(hops))
}

// Graph returns the records within q.Hops of q.Roots and the edges among
// them in one round trip. Nodes are ordered by depth, then id; the roots
// come first, at depth 0.
func (db *DB) Graph(ctx context.Context, q membrane.ExportQuery) (*membrane.Lineage, error) {
	if _, ok := lineageArrows[q.Direction]; !ok || q.Hops < 1 || q.Hops > membrane.MaxGraphHops || len(q.Roots) == 0 || len(q.Roots) > q.Limit {
		return nil, membrane.Errorf(membrane.EINVALID, "invalid graph query")
	}
	// One node beyond the limit, and one edge beyond the edge limit, tell
	// that the limit cut the graph.
	params := gated(ctx, map[string]any{"ids": q.Roots, "types": relTypes(q.Predicates), "asOf": timeParam(q.AsOf),
		"limit": int64(q.Limit - len(q.Roots) + 1), "edgeLimit": int64(q.EdgeLimit() + 1)})
	g, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.Lineage, error) {
		row, err := single(ctx, tx, graphStatement(q.Direction, q.Hops, q.AsOf), params)
		if err != nil {
			return nil, err
		}
		if row == nil {
			return &membrane.Lineage{}, nil
		}
		return db.graphOf(ctx, row.Values[0], row.Values[1])
	})
	if err != nil {
		return nil, fmt.Errorf("graph of %d roots: %w", len(q.Roots), err)
	}
	roots := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Depth == 0 {
			roots[n.Record.ID] = true
		}
	}
	for _, id := range q.Roots {
		if !roots[id] {
			// The message of a missing record: an invisible root must not
			// read differently.
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		}
	}
	g.Truncated = len(g.Edges) > q.EdgeLimit()
	if g.Truncated {
		g.Edges = g.Edges[:q.EdgeLimit()]
	}
	if cut(g, q.Limit) {
		g.Truncated = true
	}
	return g, nil
}
