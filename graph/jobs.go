package graph

import (
	"context"

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

// admin returns the request's trust when its principal is an admin, and
// FORBIDDEN otherwise.
func admin(ctx context.Context) (membrane.Trust, error) {
	t := membrane.TrustFromContext(ctx)
	return t, membrane.RequireRole(t, membrane.RoleAdmin)
}

// jobs returns the job service, NOT_IMPLEMENTED when this server runs
// none (not a passing condition a client should retry, as UNAVAILABLE is).
func (r *Resolver) jobs() (membrane.JobService, error) {
	if r.Jobs == nil {
		return nil, membrane.Errorf(membrane.ENOTIMPLEMENTED, "maintenance jobs are not configured on this server")
	}
	return r.Jobs, nil
}
