package membrane

import (
	"strings"
	"time"
)

// Graph bounds. A graph read is one bounded traversal from a few roots: the
// hop bound keeps its cost flat however large the graph, the node limit
// keeps the answer drawable.
const (
	MaxGraphHops     = 10
	DefaultGraphHops = 2
	MaxGraphLimit    = 2000
	// DefaultGraphLimit is the node limit when none is asked for.
	DefaultGraphLimit = 500
	// MaxGraphRoots bounds the roots of one graph read.
	MaxGraphRoots = 100
	// graphEdgesPerNode bounds the edges read per node of a graph; more
	// edges than that mark the graph truncated.
	graphEdgesPerNode = 8
)

// ExportQuery asks for the records within Hops of a set of roots.
type ExportQuery struct {
	// Roots are distinct record ids, in the order asked.
	Roots      []string
	Hops       int
	Predicates []Predicate
	Direction  Direction
	// Limit bounds the nodes, roots included.
	Limit int
	AsOf  *time.Time
}

// EdgeLimit is the most edges a graph of q carries.
func (q ExportQuery) EdgeLimit() int { return graphEdgesPerNode * q.Limit }

// NewExportQuery applies defaults (every predicate, both directions, 2 hops,
// 500 nodes) and validates.
func NewExportQuery(roots []string, hops *int64, preds []Predicate, dir *Direction, limit *int64, asOf *time.Time) (ExportQuery, error) {
	q := ExportQuery{Hops: DefaultGraphHops, Predicates: Predicates, Direction: DirBoth, Limit: DefaultGraphLimit, AsOf: asOf}
	v := &validator{}
	seen := map[string]bool{}
	for _, id := range roots {
		if id == "" {
			v.add("roots", "must not contain an empty id")
			continue
		}
		if !seen[id] {
			seen[id] = true
			q.Roots = append(q.Roots, id)
		}
	}
	switch {
	case len(q.Roots) == 0 && len(roots) == 0:
		v.add("roots", "is required")
	case len(q.Roots) > MaxGraphRoots:
		v.add("roots", "too many roots: %d (max %d)", len(q.Roots), MaxGraphRoots)
	}
	if hops != nil {
		if *hops < 1 || *hops > MaxGraphHops {
			v.add("hops", "must be between 1 and %d", MaxGraphHops)
		}
		q.Hops = int(*hops)
	}
	if len(preds) > 0 {
		q.Predicates = preds
		for _, p := range preds {
			if !p.Valid() {
				v.add("predicates", "unknown predicate %q", p)
			}
		}
	}
	if dir != nil {
		q.Direction = *dir
		if !dir.Valid() {
			v.add("direction", "must be OUT, IN or BOTH")
		}
	}
	if limit != nil {
		if *limit < 1 || *limit > MaxGraphLimit {
			v.add("limit", "must be between 1 and %d", MaxGraphLimit)
		}
		q.Limit = int(*limit)
	}
	if len(q.Roots) > q.Limit && len(q.Roots) <= MaxGraphRoots {
		v.add("limit", "must be at least the number of roots (%d)", len(q.Roots))
	}
	return q, v.err()
}

// Caption is a short human label for r, by its type (DisplayName). A
// redacted record carries no payload, and its caption says only its type,
// so that it reveals nothing the redaction hides.
func (r *Record) Caption() string {
	if r.Redacted {
		return string(r.Type) + " (redacted)"
	}
	return DisplayName(r)
}

// relationIDEscaper escapes the separator of a relation id (and the escape
// character) in the record ids it joins, so that distinct edges never share
// an id whatever their records' ids hold. A UUID is left as it is.
var relationIDEscaper = strings.NewReplacer("%", "%25", "|", "%7C")

// ID identifies the edge: "<sourceId>|<PREDICATE>|<targetId>", the record
// ids with "%" and "|" percent-escaped. There is at most one edge of a
// predicate between two records, so the id is unique, and it is derived
// from the edge's ends alone, so it is the same in every response and
// after restarts.
func (r *Relation) ID() string {
	return relationIDEscaper.Replace(r.SourceID) + "|" + r.Predicate.RelType() + "|" + relationIDEscaper.Replace(r.TargetID)
}
