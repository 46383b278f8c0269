package graph

import (
	"github.com/membrane/membrane/internal/membrane"
)

// JobRunConnection is a page of job runs.
type JobRunConnection struct {
	page *membrane.JobRunPage
}

// JobRunEdge is a job run with its cursor.
type JobRunEdge struct {
	Cursor string
	Node   *membrane.JobRun
}

// Edges returns the page's runs with their cursors.
func (c *JobRunConnection) Edges() []*JobRunEdge {
	edges := make([]*JobRunEdge, len(c.page.Runs))
	for i, r := range c.page.Runs {
		edges[i] = &JobRunEdge{Cursor: c.page.Cursors[i], Node: r}
	}
	return edges
}

// Nodes returns the page's runs.
func (c *JobRunConnection) Nodes() []*membrane.JobRun { return c.page.Runs }

// PageInfo returns the page's position.
func (c *JobRunConnection) PageInfo() *membrane.PageInfo { return &c.page.PageInfo }
