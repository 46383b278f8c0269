package graph

import (
	"github.com/membrane/membrane/internal/membrane"
)

// RecordConnection is a page of records. totalCount has its own resolver so
// that the count query runs only when a client selects it.
type RecordConnection struct {
	page   *membrane.RecordPage
	filter membrane.RecordFilter
}

// RecordEdge is a record with its cursor.
type RecordEdge struct {
	Cursor string
	Node   *membrane.Record
}

// Edges returns the page's records with their cursors.
func (c *RecordConnection) Edges() []*RecordEdge {
	edges := make([]*RecordEdge, len(c.page.Records))
	for i, r := range c.page.Records {
		edges[i] = &RecordEdge{Cursor: c.page.Cursors[i], Node: r}
	}
	return edges
}

// Nodes returns the page's records.
func (c *RecordConnection) Nodes() []*membrane.Record { return c.page.Records }

// PageInfo returns the page's position.
func (c *RecordConnection) PageInfo() *membrane.PageInfo { return &c.page.PageInfo }

// AuditConnection is a page of audit entries.
type AuditConnection struct {
	page *membrane.AuditPage
}

// AuditEdge is an audit entry with its cursor.
type AuditEdge struct {
	Cursor string
	Node   *membrane.AuditEntry
}

// Edges returns the page's entries with their cursors.
func (c *AuditConnection) Edges() []*AuditEdge {
	edges := make([]*AuditEdge, len(c.page.Entries))
	for i, e := range c.page.Entries {
		edges[i] = &AuditEdge{Cursor: c.page.Cursors[i], Node: e}
	}
	return edges
}

// Nodes returns the page's entries.
func (c *AuditConnection) Nodes() []*membrane.AuditEntry { return c.page.Entries }

// PageInfo returns the page's position.
func (c *AuditConnection) PageInfo() *membrane.PageInfo { return &c.page.PageInfo }

// RelationEdge is a neighbour of a record, with the edge that links them.
type RelationEdge struct {
	Cursor    string
	Node      *membrane.Record
	Relation  *membrane.Relation
	Direction membrane.Direction
}

// RelationConnection is a page of a record's relations.
type RelationConnection struct {
	Edges    []*RelationEdge
	PageInfo *membrane.PageInfo
}
