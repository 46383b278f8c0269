package membrane

import (
	"context"
	"time"
)

// RelationService adds relations between records (addRelation), as a
// revision of both: the request must be able to revise each end.
type RelationService struct {
	revisions *RevisionService
}

// AddRelation writes the edge sourceID -predicate-> targetID. A replay of
// its idempotency key answers with the edge the first request wrote (as
// stored with the key), or CONFLICT when the replaying request may no
// longer see its target.
func (s *RelationService) AddRelation(ctx context.Context, sourceID string, predicate Predicate, targetID string, weight *float64, a RevisionArgs) (*Relation, error) {
	a.ExpectedVersion = nil
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"sourceId": sourceID, "predicate": predicate, "targetId": targetID, "weight": weight, "meta": meta}
	res, err := s.revisions.revise(ctx, "addRelation", args, a.IdempotencyKey, []string{sourceID, targetID}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return Relate(locked[sourceID], locked[targetID], predicate, weight, meta, now)
	})
	if err != nil {
		return nil, err
	}
	return relationOf(res.Edges, sourceID, predicate, targetID)
}

// relationOf returns the edge sourceID -predicate-> targetID of a
// revision's edges. A replay leaves out an edge whose target the replaying
// request may not see: the relation is then as good as gone for it.
func relationOf(edges []Relation, sourceID string, predicate Predicate, targetID string) (*Relation, error) {
	for _, e := range edges {
		if e.SourceID == sourceID && e.Predicate == predicate && e.TargetID == targetID {
			return &e, nil
		}
	}
	return nil, Errorf(ECONFLICT, "the relation this idempotency key created no longer exists")
}
