package graph

import (
	"cmp"
	"context"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

func init() {
	// An operation refused by a limit or by the allow-list never ran: a
	// request error (HTTP 422), like a parse or validation error, rather
	// than a 200 with errors.
	errcode.RegisterErrorType(Code(membrane.ECOMPLEXITY), errcode.KindProtocol)
	errcode.RegisterErrorType(Code(membrane.ENOTALLOWED), errcode.KindProtocol)
	// Only errors of an operation refused before it runs are classed by
	// code; a resolver's FORBIDDEN stays a 200 with errors.
	errcode.RegisterErrorType(Code(membrane.EFORBIDDEN), errcode.KindProtocol)
}

// QueryLimits bound one GraphQL operation. Zero fields are not limited.
type QueryLimits struct {
	// Complexity is the highest cost (see complexity.go).
	Complexity int
	// Depth is the deepest nesting of fields.
	Depth int
	// RootFields is the most root fields (aliases included, fragments
	// expanded) one operation may select: each runs Neo4j transactions of
	// its own, whatever it selects.
	RootFields int
}

// UseQueryLimits holds every operation srv runs to the limits of its
// request (limits reads them from the request's context; the transport
// picks them by the role of the request's principal) before it runs: the
// depth, size and root fields of the operation, then its cost; and reports
// the cost in the response's extensions. With introspection false,
// __schema and __type are refused (FORBIDDEN). schema names the root
// types. The transport sets the parser's token limit and the request
// timeout around these.
func UseQueryLimits(srv *handler.Server, schema *ast.Schema, limits func(context.Context) QueryLimits, introspection bool) {
	// The shape check comes first: gqlgen's cost walk follows every
	// fragment spread without memory, so it must only ever see operations
	// whose expanded size is known to be bounded.
	srv.Use(shapeLimit{limits: limits, introspection: introspection, roots: rootTypes(schema)})
	srv.Use(&extension.ComplexityLimit{Func: func(ctx context.Context, _ *graphql.OperationContext) int {
		if c := limits(ctx).Complexity; c > 0 {
			return c
		}
		return math.MaxInt
	}})
	srv.AroundResponses(reportComplexity)
}

// reportComplexity adds the operation's cost and its limit to the
// response's extensions, so a client can see how close it is.
func reportComplexity(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	// A request that never became an operation (its body did not decode)
	// has no operation context, and so no cost.
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	if s := extension.GetComplexityStats(ctx); s != nil && s.ComplexityLimit < math.MaxInt {
		graphql.RegisterExtension(ctx, "complexity", map[string]int{"cost": s.Complexity, "limit": s.ComplexityLimit})
	}
	return next(ctx)
}

// MaxExpandedFields bounds the fields an operation selects, fragments
// expanded, for roles without a cost limit.
const MaxExpandedFields = 1_000_000

// MaxSelectionWidth bounds the fields one selection set selects (aliases,
// __typename and the fields of the fragments spread in it included), for
// every role. Executing a selection set costs gqlgen time quadratic in its
// width: a document of 6,000 `aN: __typename` aliases passed every other
// limit (__typename costs nothing and runs no transaction) and took half a
// second of CPU each. No type has near 200 fields.
const MaxSelectionWidth = 200

// shapeLimit refuses operations nested deeper than the depth limit,
// operations whose fragments, once expanded, select more fields than the
// complexity limit allows (each field costs at least 1), operations of
// more root fields than the root-field limit, and, when introspection is
// off, introspection (FORBIDDEN: gqlgen alone would fail it as an internal
// error).
type shapeLimit struct {
	limits        func(context.Context) QueryLimits
	introspection bool
	// roots names the root type of each kind of operation.
	roots map[ast.Operation]string
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = shapeLimit{}

// ExtensionName implements graphql.HandlerExtension.
func (shapeLimit) ExtensionName() string { return "ShapeLimit" }

// Validate implements graphql.HandlerExtension.
func (shapeLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator. It
// runs after validation, so fragments are known and acyclic.
func (s shapeLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	l := s.limits(ctx)
	m := shapeOf(opCtx.Operation.SelectionSet, map[string]shape{})
	if m.introspects && !s.introspection {
		err := gqlerror.Errorf("introspection is disabled on this server")
		errcode.Set(err, Code(membrane.EFORBIDDEN))
		return err
	}
	if l.Depth > 0 && m.depth > l.Depth {
		return limitError("operation is nested %d fields deep, which exceeds the limit of %d", m.depth, l.Depth)
	}
	if n := rootFields(opCtx.Operation.SelectionSet, s.roots[opCtx.Operation.Operation]); l.RootFields > 0 && n > l.RootFields {
		return limitError("operation selects %d root fields (aliases and fragments included), which exceeds the limit of %d root fields", n, l.RootFields)
	}
	if m.maxWidth > MaxSelectionWidth {
		return limitError("a selection set selects %d fields (aliases and __typename included), which exceeds the limit of %d", m.maxWidth, MaxSelectionWidth)
	}
	// Without a cost limit the expansion is still capped: gqlgen walks it
	// whatever the limit.
	if limit := cmp.Or(l.Complexity, MaxExpandedFields); m.fields > limit {
		return limitError("operation selects %d fields once its fragments are expanded, which exceeds the limit of %d", m.fields, limit)
	}
	return nil
}

func limitError(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, Code(membrane.ECOMPLEXITY))
	return err
}

// shape is the depth of a selection set (fields, not fragments, nest), how
// many fields it selects with its fragments expanded, how many it selects
// at its own level (width: the fields of fragments spread in it included)
// and the widest selection set within it, and whether it introspects the
// schema.
type shape struct {
	depth, fields   int
	width, maxWidth int
	introspects     bool
}

// shapeOf measures set. A fragment's shape does not depend on where it is
// spread, so each is measured once (memo): a document that spreads
// fragments within fragments costs its size, not its expansion. The
// introspection roots are left out: gqlparser's MaxIntrospectionDepth rule
// bounds them, and the introspection setting decides whether they run.
func shapeOf(set ast.SelectionSet, memo map[string]shape) shape {
	var out shape
	for _, sel := range set {
		var s shape
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__schema" || sel.Name == "__type" {
				out.introspects = true
				out.width = add(out.width, 1)
				continue
			}
			s = shapeOf(sel.SelectionSet, memo)
			s.depth++
			s.fields = add(s.fields, 1)
			// The field's own selection set is nested: it adds one to
			// this level's width, not its own.
			s.width = 1
		case *ast.InlineFragment:
			s = shapeOf(sel.SelectionSet, memo)
		case *ast.FragmentSpread:
			var ok bool
			if s, ok = memo[sel.Name]; !ok && sel.Definition != nil {
				s = shapeOf(sel.Definition.SelectionSet, memo)
				memo[sel.Name] = s
			}
		}
		out.depth = max(out.depth, s.depth)
		out.fields = add(out.fields, s.fields)
		out.width = add(out.width, s.width)
		out.maxWidth = max(out.maxWidth, s.maxWidth)
		out.introspects = out.introspects || s.introspects
	}
	out.maxWidth = max(out.maxWidth, out.width)
	return out
}

// rootFields counts the root fields an operation runs: the fields of its
// selection set after collecting its fragments and inline fragments, one
// per response key (an alias, or the field's name), as gqlgen executes
// them. Fields named __typename, __schema or __type do no Neo4j work and
// are not counted. @skip and @include are not evaluated: a field that
// might run counts, as it does for the cost. Linear in the document
// (gqlgen's own collection is quadratic in the number of aliases).
func rootFields(set ast.SelectionSet, root string) int {
	keys := map[string]bool{}
	visited := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				if !strings.HasPrefix(sel.Name, "__") {
					keys[cmp.Or(sel.Alias, sel.Name)] = true
				}
			case *ast.InlineFragment:
				if sel.TypeCondition == "" || sel.TypeCondition == root {
					walk(sel.SelectionSet)
				}
			case *ast.FragmentSpread:
				if d := sel.Definition; !visited[sel.Name] && d != nil && d.TypeCondition == root {
					visited[sel.Name] = true
					walk(d.SelectionSet)
				}
			}
		}
	}
	walk(set)
	return len(keys)
}

// rootTypes names the root type of each kind of operation in schema.
func rootTypes(schema *ast.Schema) map[ast.Operation]string {
	out := map[ast.Operation]string{}
	for op, def := range map[ast.Operation]*ast.Definition{
		ast.Query: schema.Query, ast.Mutation: schema.Mutation, ast.Subscription: schema.Subscription} {
		if def != nil {
			out[op] = def.Name
		}
	}
	return out
}

// isTokenLimit reports whether err is the parser's refusal of a document
// over the token limit (gqlparser's message; its code is
// GRAPHQL_PARSE_FAILED).
func isTokenLimit(err *gqlerror.Error) bool {
	return strings.HasPrefix(err.Message, "exceeded token limit of ")
}
