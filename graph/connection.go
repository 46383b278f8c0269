package graph

import (
	"github.com/membrane/membrane/internal/membrane"
)

// Connection is a keyset page of nodes in Relay's terms. gqlgen cannot bind
// a GraphQL type to a generic Go type by name (99designs/gqlgen#2302), so
// each connection of the schema is an alias of an instantiation below and
// autobind finds it by its schema name.
type Connection[T any] struct {
	page *membrane.PageOf[T]
}

// Edge is a node with its cursor.
type Edge[T any] struct {
	Cursor string
	Node   T
}

// Edges returns the page's nodes with their cursors.
func (c *Connection[T]) Edges() []*Edge[T] {
	edges := make([]*Edge[T], len(c.page.Items))
	for i, n := range c.page.Items {
		edges[i] = &Edge[T]{Cursor: c.page.Cursors[i], Node: n}
	}
	return edges
}

// Nodes returns the page's nodes.
func (c *Connection[T]) Nodes() []T { return c.page.Items }

// PageInfo returns the page's position.
func (c *Connection[T]) PageInfo() *membrane.PageInfo { return &c.page.PageInfo }

// RecordConnection is a page of records. It keeps the filter of its query:
// totalCount has its own resolver, so that the count query runs only when a
// client selects it.
type RecordConnection struct {
	Connection[*membrane.Record]
	filter membrane.RecordFilter
}

type (
	// RecordEdge is a record with its cursor.
	RecordEdge = Edge[*membrane.Record]
	// AuditConnection is a page of audit entries.
	AuditConnection = Connection[*membrane.AuditEntry]
	// AuditEdge is an audit entry with its cursor.
	AuditEdge = Edge[*membrane.AuditEntry]
	// JobRunConnection is a page of job runs.
	JobRunConnection = Connection[*membrane.JobRun]
	// JobRunEdge is a job run with its cursor.
	JobRunEdge = Edge[*membrane.JobRun]
)

// RelationEdge is a neighbour of a record, with the edge that links them.
// Unlike the edges above it carries more than a node.
type RelationEdge struct {
	Cursor    string
	Node      *membrane.Record
	Relation  *membrane.Relation
	Direction membrane.Direction
}

// RelationConnection is a page of a record's relations: a page of its
// neighbours (membrane.NeighborPage), each with the edge that links them.
type RelationConnection struct {
	page *membrane.NeighborPage
}

// newRelationConnection returns the connection of page; nil is an empty
// page.
func newRelationConnection(page *membrane.NeighborPage) *RelationConnection {
	if page == nil {
		page = &membrane.NeighborPage{}
	}
	return &RelationConnection{page: page}
}

// Edges returns the page's neighbours with their edges and cursors.
func (c *RelationConnection) Edges() []*RelationEdge {
	edges := make([]*RelationEdge, len(c.page.Items))
	for i, n := range c.page.Items {
		d := membrane.DirIn
		if n.Outgoing {
			d = membrane.DirOut
		}
		edges[i] = &RelationEdge{Cursor: c.page.Cursors[i], Node: n.Record, Relation: n.Relation, Direction: d}
	}
	return edges
}

// PageInfo returns the page's position.
func (c *RelationConnection) PageInfo() *membrane.PageInfo { return &c.page.PageInfo }
