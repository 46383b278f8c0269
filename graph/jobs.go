package graph

import (
	"context"

	"github.com/membrane/membrane/internal/membrane"
)

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
