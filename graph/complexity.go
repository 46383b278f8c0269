package graph

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/ast"
)

// Base costs of root fields. Every root field runs at least one Neo4j
// transaction of its own, however little it selects, so one costs this
// instead of 1: 6,000 aliases of a scalar root field are 6,000
// transactions, not 6,000 units of a 50,000 budget. A mutation writes (its
// records, audit entries, the change feed's numbering), so it costs more.
const (
	QueryRootCost    = 100
	MutationRootCost = 500
	// MetricsCost is metrics' own cost (before its base): it scans
	// everything the caller sees, so a reader's cost limit allows about ten
	// in one operation.
	MetricsCost = 5000
)

// MaxListedAuditPage bounds each record's auditLog page when the
// record is one of a list (lineage, graph, records…): a list of n
// records then reads at most n × MaxListedAuditPage entries, and the
// cost prices a record's page at this bound instead of at first. A
// record's page holds at most this many entries there, hasNextPage
// saying there are more; the rest is read with after, from the record
// alone or auditLog(filter: {recordId}).
const MaxListedAuditPage = 20

// NewCostedSchema returns the executable schema of r with Membrane's cost
// model: the list fields costed by what they may return (setComplexity)
// and root fields by their base cost (costRoots); its queries and
// mutations resolve the batch fields of records that list elements hold
// once per list (siblingSchema). The transport serves this schema.
func NewCostedSchema(r *Resolver) graphql.ExecutableSchema {
	cfg := Config{Resolvers: r}
	setComplexity(&cfg.Complexity)
	return siblingSchema{costRoots(NewExecutableSchema(cfg))}
}

// rootCosted is the executable schema with the base cost of root fields
// added to what the field would cost anywhere else.
type rootCosted struct {
	graphql.ExecutableSchema
	base map[string]int // by root type name
}

// costRoots returns es with root fields costed by their base cost (see
// QueryRootCost). Subscriptions read the feed in transactions of their own
// for as long as they run: they cost what a query does.
func costRoots(es graphql.ExecutableSchema) rootCosted {
	cost := map[ast.Operation]int{ast.Query: QueryRootCost, ast.Mutation: MutationRootCost, ast.Subscription: QueryRootCost}
	base := map[string]int{}
	for op, name := range rootTypes(es.Schema()) {
		base[name] = cost[op]
	}
	return rootCosted{ExecutableSchema: es, base: base}
}

// Complexity implements graphql.ExecutableSchema: a root field's cost is
// its base cost in place of the 1 every field costs, plus what it selects
// (times what it returns, as set by setComplexity). __typename and the
// introspection fields run no Cypher and keep their cost.
func (s rootCosted) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	cost, ok := s.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
	base, root := s.base[typeName]
	if !root || strings.HasPrefix(field, "__") {
		return cost, ok
	}
	if !ok || cost < 1 {
		cost = add(1, child) // gqlgen's default
	}
	return add(cost, base-1), true
}

// A field costs 1 plus what it selects (gqlgen's default); a root field
// costs its base cost instead of 1 (costRoots). The fields set
// here return many objects, so what they select is paid once per object
// they may return: the page size (first), the limit, or a batch's length,
// each clamped to its maximum so that an out-of-range argument fails with
// BAD_USER_INPUT from the domain rather than as a cost. Lists without an
// argument are priced at membrane.DefaultPageSize items. Traversals
// (lineage, graph, retrieveGraph) add the work of the walk itself: up to limit
// nodes per level, for every level.
//
// The funcs are typed by the generated ComplexityRoot, so a schema change
// to one of these fields shows up here as a compile error.
func setComplexity(c *ComplexityRoot) {
	page := func(first *int64) int { return count(first, membrane.DefaultPageSize, membrane.MaxPageSize) }

	c.Query.Records = func(child int, _ *membrane.RecordFilter, _ *RecordOrder, first *int64, _ *string, _ *time.Time) int {
		return listCost(child, page(first))
	}
	c.Query.AuditLog = func(child int, _ *membrane.AuditFilter, first *int64, _ *string, _ *membrane.AuditOrder) int {
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
	c.Query.Graph = func(child int, _ []string, hops *int64, _ []membrane.Predicate, _ *membrane.Direction, _ *time.Time, limit *int64) int {
		n := count(limit, membrane.DefaultGraphLimit, membrane.MaxGraphLimit)
		h := count(hops, membrane.DefaultGraphHops, membrane.MaxGraphHops)
		return add(listCost(child, n), mul(h, n))
	}
	c.Query.Retrieve = func(child int, in RetrieveInput) int {
		return listCost(child, count(in.Limit, membrane.DefaultRetrieveLimit, membrane.MaxRetrieveLimit))
	}
	c.Query.RetrieveGraph = func(child int, in RetrieveGraphInput) int {
		n := count(in.NodeLimit, membrane.DefaultNodeLimit, membrane.MaxNodeLimit)
		hops := count(in.MaxHops, membrane.DefaultMaxHops, membrane.MaxHops)
		return add(listCost(child, n), mul(hops, n))
	}
	// metrics aggregates every record the caller may see, however few
	// fields it selects: it costs as much as reading MetricsCost records.
	c.Query.Metrics = func(child int, _ []string) int { return add(MetricsCost, child) }
	c.Mutation.IngestBatch = func(child int, inputs []*membrane.RecordInput, _ *string, _ *string) int {
		return listCost(child, min(len(inputs), membrane.MaxBatch))
	}

	// A record of a list reads at most MaxListedAuditPage entries of its
	// audit (the resolver caps it), so that is what each record's page
	// costs, and a list of n records pays for n such pages, not n full
	// ones. A record read alone may page up to MaxPageSize entries: one
	// bounded page, the rest of which the cost leaves out; what the limit
	// guards against is a page per record of a list, which the cap bounds.
	c.Record.AuditLog = func(child int, first *int64, _ *string, _ *membrane.AuditOrder) int {
		return listCost(child, min(page(first), MaxListedAuditPage))
	}
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

// listed reports whether the field being resolved is of an object reached
// through a list (an index on its path): a record of lineage, graph,
// records… rather than one read alone (see MaxListedAuditPage).
func listed(ctx context.Context) bool {
	for _, p := range graphql.GetPath(ctx) {
		if _, ok := p.(ast.PathIndex); ok {
			return true
		}
	}
	return false
}
