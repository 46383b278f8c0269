package graph

// Batch fields of records that sit inside the elements of a list.
//
// gqlgen resolves a batch field (Record.relations, auditLog, history…) once
// for a list of records ([Record!]), but finds the batch by the list index
// directly above the record. A record held by a field of a list element —
// a connection's edges[i].node, a retrieval's hits[i].record, a lineage's
// nodes[i].record — has a field name there, so gqlgen called the resolver
// once per record: a page of 500 records with ten lineage fields ran 5,000
// Neo4j transactions at once, which exhausted the driver's pool under load.
// siblingLoad gives those records their batch back: the first of them to
// ask loads the field for the records of every element of the list, and
// the others read their own ids from that answer.

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/ast"
)

// siblingBatches holds, for one query or mutation, the loads shared by the
// records of list elements, keyed by the list's field context and the
// fields that lead from an element to the loaded field.
type siblingBatches struct {
	loads  sync.Map // siblingKey -> *siblingLoadResult
	chains chainCache
}

type siblingKey struct {
	list          *graphql.FieldContext
	holder, field string // response keys: the element's record field, the batch field
}

type siblingLoadResult struct {
	once sync.Once
	ids  map[*membrane.Record]bool // the records the load covered
	res  any                       // map[string]V
	err  error
}

type siblingBatchesKey struct{}

// siblingSchema is an executable schema whose queries and mutations carry
// the shared loads of siblingLoad. Subscriptions do not: an event is
// resolved long after the one before it, and a subscription's loads would
// only accumulate.
type siblingSchema struct{ graphql.ExecutableSchema }

// Exec implements graphql.ExecutableSchema. The operation runs when its
// response handler is called, with the context it is called with.
func (s siblingSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	next := s.ExecutableSchema.Exec(ctx)
	if oc := graphql.GetOperationContext(ctx); oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next
	}
	return func(ctx context.Context) *graphql.Response {
		return next(context.WithValue(ctx, siblingBatchesKey{}, &siblingBatches{}))
	}
}

// siblingLoad returns load(objs), keyed by record id; or, when objs is
// the one record that a field of a list element holds (gqlgen resolving a
// batch field record by record), load's answer for the records of every
// element of that list, computed once for them all.
func siblingLoad[V any](ctx context.Context, objs []*membrane.Record, load func([]*membrane.Record) (map[string]V, error)) (map[string]V, error) {
	batches, _ := ctx.Value(siblingBatchesKey{}).(*siblingBatches)
	fc := graphql.GetFieldContext(ctx)
	if len(objs) != 1 || batches == nil || fc == nil || fc.Parent == nil || fc.Parent.Parent == nil ||
		fc.Parent.Parent.Index == nil || fc.Parent.Parent.Parent == nil {
		return load(objs)
	}
	holder, list := fc.Parent, fc.Parent.Parent.Parent
	v, _ := batches.loads.LoadOrStore(siblingKey{list: list, holder: holder.Field.Alias, field: fc.Field.Alias}, &siblingLoadResult{})
	r := v.(*siblingLoadResult)
	r.once.Do(func() {
		recs := heldRecords(list.Result, holder.Field.Name)
		r.ids = make(map[*membrane.Record]bool, len(recs))
		for _, rec := range recs {
			r.ids[rec] = true
		}
		if len(recs) > 1 {
			r.res, r.err = load(recs)
		}
	})
	if !r.ids[objs[0]] || (r.res == nil && r.err == nil) {
		// Not a record of that list's elements (or a list of one).
		return load(objs)
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.res.(map[string]V), nil
}

// heldRecords returns the records that the elements of list (a slice of
// structs or pointers to them) hold in their field named like the GraphQL
// field name (gqlgen binds fields by name, ignoring case), or none when
// list is not such a slice.
func heldRecords(list any, name string) []*membrane.Record {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice {
		return nil
	}
	recType := reflect.TypeFor[*membrane.Record]()
	var out []*membrane.Record
	for i := range v.Len() {
		e := v.Index(i)
		for e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
			if e.IsNil() {
				break
			}
			e = e.Elem()
		}
		if e.Kind() != reflect.Struct {
			continue
		}
		f := e.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
		if !f.IsValid() || !f.CanInterface() || f.Type() != recType || f.IsNil() {
			continue
		}
		out = append(out, f.Interface().(*membrane.Record))
	}
	return out
}
