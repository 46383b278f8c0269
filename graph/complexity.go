package graph

import (
	"math"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// A field costs 1 plus what it selects (gqlgen's default). The fields set
// here return many objects, so what they select is paid once per object
// they may return: the page size (first), the limit, or a batch's length,
// each clamped to its maximum so that an out-of-range argument fails with
// BAD_USER_INPUT from the domain rather than as a cost. Lists without an
// argument are priced at membrane.DefaultPageSize items. Traversals
// (lineage, retrieveGraph) add the work of the walk itself: up to limit
// nodes per level, for every level.
//
// The funcs are typed by the generated ComplexityRoot, so a schema change
// to one of these fields shows up here as a compile error.
func setComplexity(c *ComplexityRoot) {
	page := func(first *int64) int { return count(first, membrane.DefaultPageSize, membrane.MaxPageSize) }

	c.Query.Records = func(child int, _ *membrane.RecordFilter, _ *RecordOrder, first *int64, _ *string, _ *time.Time) int {
		return listCost(child, page(first))
	}
	c.Query.AuditLog = func(child int, _ *membrane.AuditFilter, first *int64, _ *string) int {
		return listCost(child, page(first))
	}
	c.Query.JobRuns = func(child int, _ *membrane.JobName, first *int64, _ *string) int {
		return listCost(child, page(first))
	}
	c.Query.Lineage = func(child int, _ string, _ *membrane.Direction, _ []membrane.Predicate, maxDepth, limit *int64, _ *time.Time) int {
		n := count(limit, membrane.DefaultLineageLimit, membrane.MaxLineageLimit)
		d := count(maxDepth, membrane.DefaultLineageDepth, membrane.MaxLineageDepth)
		return add(listCost(child, n), mul(d, n))
	}
	c.Query.Retrieve = func(child int, in RetrieveInput) int {
		return listCost(child, count(in.Limit, membrane.DefaultRetrieveLimit, membrane.MaxRetrieveLimit))
	}
	c.Query.RetrieveGraph = func(child int, in RetrieveGraphInput) int {
		n := count(in.NodeLimit, membrane.DefaultNodeLimit, membrane.MaxNodeLimit)
		hops := count(in.MaxHops, membrane.DefaultMaxHops, membrane.MaxHops)
		return add(listCost(child, n), mul(hops, n))
	}
	c.Mutation.IngestBatch = func(child int, inputs []*membrane.RecordInput, _ *string, _ *string) int {
		return listCost(child, min(len(inputs), membrane.MaxBatch))
	}

	c.Record.AuditLog = func(child int, first *int64, _ *string) int { return listCost(child, page(first)) }
	c.Record.Relations = func(child int, _ *membrane.Direction, _ []membrane.Predicate, first *int64, _ *string) int {
		return listCost(child, page(first))
	}
	// Lists without a size argument cost what the store may return: up to
	// MaxNeighbors related records, a supersede chain up to MaxChain.
	related := func(child int) int { return listCost(child, membrane.MaxNeighbors) }
	c.Record.Supersedes = related
	c.Record.DerivedFrom = related
	c.Record.Derivatives = related
	c.Record.ContestedBy = related
	c.Record.Contests = related
	c.Record.History = func(child int) int { return listCost(child, membrane.MaxChain) }
}

// count is how many items an optional size argument asks for: def when
// absent, clamped to [0, hi].
func count(v *int64, def, hi int) int {
	if v == nil {
		return def
	}
	return int(min(max(*v, 0), int64(hi)))
}

// listCost is the cost of a field returning up to n objects, each costing
// child.
func listCost(child, n int) int { return add(1, mul(n, child)) }

// add and mul saturate instead of overflowing, so that no query can wrap
// its cost around to a small number.
func add(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func mul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}
