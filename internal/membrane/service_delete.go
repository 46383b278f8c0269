package membrane

import (
	"context"
	"time"
)

// DeleteService deletes records (deleteRecord): admins only, and even an
// admin deletes only what its request sees in full.
type DeleteService struct {
	store DeleteStore
	now   func() time.Time
}

// DeleteRecord deletes record id and its edges, and returns its tombstone
// as the request may see it. NOT_IMPLEMENTED when the server deletes
// nothing.
func (s *DeleteService) DeleteRecord(ctx context.Context, id string, rationale *string, expectedVersion *int64) (*AuditEntry, error) {
	t := TrustFromContext(ctx)
	if err := RequireRole(t, RoleAdmin); err != nil {
		return nil, err
	}
	if s.store == nil {
		return nil, Errorf(ENOTIMPLEMENTED, "deleting records is not configured on this server")
	}
	meta := RevisionArgs{Rationale: rationale, ExpectedVersion: expectedVersion}.meta(t)
	now := s.now()
	a, err := s.store.DeleteRecord(ctx, id, func(rec *Record, edges []AuditRef) (*AuditEntry, error) {
		if err := t.CanRevise(rec); err != nil {
			return nil, err
		}
		return PlanDelete(rec, edges, meta, now)
	})
	if err != nil {
		return nil, err
	}
	// The tombstone keeps every removed edge; the answer shows only those
	// whose other end the (possibly narrowed) request may see.
	return t.GateEntry(a), nil
}
