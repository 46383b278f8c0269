package membrane

import (
	"context"
	"time"
)

// Lineage bounds. Every traversal has a hop bound and a row limit.
const (
	MaxLineageDepth     = 100
	DefaultLineageDepth = 10
	MaxLineageLimit     = 1000
	DefaultLineageLimit = 200
	// MaxNeighbors bounds the single-valued lineage fields of a record
	// (supersedes, derivedFrom…) read without pagination.
	MaxNeighbors = 100
	// MaxChain bounds history: the records of one supersede chain.
	MaxChain = 1000
)

// LineageQuery asks for the lineage of one record.
type LineageQuery struct {
	Direction  Direction
	Predicates []Predicate
	MaxDepth   int
	Limit      int
	AsOf       *time.Time
}

// NewLineageQuery applies defaults and validates.
func NewLineageQuery(dir *Direction, preds []Predicate, maxDepth, limit *int64, asOf *time.Time) (LineageQuery, error) {
	q := LineageQuery{Direction: DirOut, Predicates: LineagePredicates, MaxDepth: DefaultLineageDepth, Limit: DefaultLineageLimit, AsOf: asOf}
	v := &validator{}
	if dir != nil {
		q.Direction = *dir
		if !dir.Valid() {
			v.add("direction", "must be ANCESTORS, DESCENDANTS or BOTH")
		}
	}
	if len(preds) > 0 {
		q.Predicates = preds
		for _, p := range preds {
			if !p.Valid() {
				v.add("predicates", "unknown predicate %q", p)
			}
		}
	}
	if maxDepth != nil {
		if *maxDepth < 1 || *maxDepth > MaxLineageDepth {
			v.add("maxDepth", "must be between 1 and %d", MaxLineageDepth)
		}
		q.MaxDepth = int(*maxDepth)
	}
	if limit != nil {
		if *limit < 1 || *limit > MaxLineageLimit {
			v.add("limit", "must be between 1 and %d", MaxLineageLimit)
		}
		q.Limit = int(*limit)
	}
	return q, v.err()
}

// LineageNode is a record in a lineage graph with its distance from the root.
type LineageNode struct {
	Record *Record
	Depth  int
}

// Lineage is a graph view: nodes (the root at depth 0) and the edges among them.
type Lineage struct {
	Nodes []*LineageNode
	Edges []*Relation
	// Truncated is true when the row limit cut the traversal short.
	Truncated bool
}

// Neighbor is a record related to another by one edge.
type Neighbor struct {
	Relation *Relation
	Record   *Record
	// Outgoing is true when the edge points from the record asked about.
	Outgoing bool
}

// NeighborPage is a keyset page of one record's neighbours, oldest edge
// first.
type NeighborPage = PageOf[*Neighbor]

// NeighborQuery selects edges of a batch of records.
type NeighborQuery struct {
	Predicates []Predicate
	Direction  Direction
	Page       Page
	AsOf       *time.Time
}

// LineageStore reads lineage and history. Each method is one round trip.
type LineageStore interface {
	// FindRecordAsOf returns a record with its status and salience as they
	// were at asOf (ENOTFOUND when it did not exist yet).
	FindRecordAsOf(ctx context.Context, id string, asOf time.Time) (*Record, error)
	// Neighbors returns, for each id, the page q.Page of its neighbours.
	Neighbors(ctx context.Context, ids []string, q NeighborQuery) (map[string]*NeighborPage, error)
	// SupersedeChains returns, for each id, its supersede chain oldest first.
	SupersedeChains(ctx context.Context, ids []string, asOf *time.Time) (map[string][]*Record, error)
	// Lineage returns the bounded lineage graph of a record.
	Lineage(ctx context.Context, id string, q LineageQuery) (*Lineage, error)
	// Graph returns the records within q.Hops of q.Roots and the edges
	// among them, as of q.AsOf. A root that is missing or invisible is
	// ENOTFOUND, with the same message.
	Graph(ctx context.Context, q ExportQuery) (*Lineage, error)
}

// Head returns the active head of a supersede chain (oldest first): the
// last record, which nothing supersedes.
func Head(chain []*Record) *Record {
	if len(chain) == 0 {
		return nil
	}
	return chain[len(chain)-1]
}
