package membrane

import (
	"context"
	"time"
)

// CaptureService captures memories (captureMemory): it checks that the
// request may write the capture's records (all of its scope and
// sensitivity), derives the idempotency key and embeds the records; the
// store reuses only entities the request sees in full.
type CaptureService struct {
	store  CaptureStore
	policy Policy
	embed  embedding
	now    func() time.Time
}

// Capture builds and stores one capture. A replay of its idempotency key
// answers with the first request's records and edges, as the replaying
// request may see them now.
func (s *CaptureService) Capture(ctx context.Context, in CaptureInput, key *string) (*Captured, error) {
	t := TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	idem, err := RequestIdempotency(t, key, "captureMemory", in)
	if err != nil {
		return nil, err
	}
	c, err := s.policy.BuildCapture(in, s.now())
	if err != nil {
		return nil, PrefixFields(err, "input.")
	}
	if err := t.CanCreate(c.Primary); err != nil {
		return nil, err
	}
	s.embed.capture(ctx, c)
	res, err := s.store.Capture(ctx, idem, c, t.Principal.Actor)
	if err == nil && !res.Replayed {
		s.embed.written(res.Primary)
		s.embed.written(res.Created...)
	}
	return res, err
}
