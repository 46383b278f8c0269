package membrane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// Lease is a job's lease, held in the database so that of several server
// processes sharing it only one runs the job at a time.
type Lease struct {
	// Key names what the lease guards: a job, restricted or not to scopes.
	Key string
	// Holder is the process holding it, "" when free.
	Holder    string
	ExpiresAt time.Time
	// LastSlot is the latest schedule slot a run was granted for, so that
	// processes firing for one slot run it once.
	LastSlot *time.Time
}

// LeaseKey is the lease key of job restricted to scopes (nil: unrestricted).
// Runs over disjoint scope sets touch disjoint records, so they lease
// separately; every unrestricted run of a job shares one lease.
func LeaseKey(job JobName, scopes []string) string {
	if scopes == nil {
		return string(job)
	}
	s := slices.Clone(scopes)
	slices.Sort(s)
	h := sha256.Sum256([]byte(strings.Join(s, "\x00")))
	return string(job) + "@" + hex.EncodeToString(h[:8])
}

// Acquire grants l to holder at now for ttl, for a run of slot (nil for a
// run on demand). It is ECONFLICT while another holder's lease has not
// expired, while holder itself holds it (a run is under way), or when slot
// was already run (another process fired for it first).
func (l Lease) Acquire(holder string, slot *time.Time, now time.Time, ttl time.Duration) (Lease, error) {
	if l.Holder != "" && now.Before(l.ExpiresAt) {
		return l, Errorf(ECONFLICT, "job %s is running on %s (lease until %s)", l.Key, l.Holder, l.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if slot != nil && l.LastSlot != nil && !slot.After(*l.LastSlot) {
		return l, Errorf(ECONFLICT, "job %s already ran for the slot %s", l.Key, slot.UTC().Format(time.RFC3339))
	}
	n := Lease{Key: l.Key, Holder: holder, ExpiresAt: now.Add(ttl).UTC(), LastSlot: l.LastSlot}
	if slot != nil {
		s := slot.UTC()
		n.LastSlot = &s
	}
	return n, nil
}

// Renew extends holder's lease to now+ttl. It is ECONFLICT when holder no
// longer holds it: the lease expired and another process took it, so the
// run must stop.
func (l Lease) Renew(holder string, now time.Time, ttl time.Duration) (Lease, error) {
	if l.Holder != holder {
		return l, Errorf(ECONFLICT, "lease %s was lost to %q", l.Key, l.Holder)
	}
	l.ExpiresAt = now.Add(ttl).UTC()
	return l, nil
}

// Release frees holder's lease; a lease held by someone else is left alone.
func (l Lease) Release(holder string) Lease {
	if l.Holder == holder {
		l.Holder = ""
		l.ExpiresAt = time.Time{}
	}
	return l
}

// LeaseService keeps leases and job runs. Implemented by the neo4j package.
type LeaseService interface {
	// UpdateLease reads lease key under a write lock (a free lease when it
	// does not exist yet), applies fn and writes the result, in one
	// transaction; fn's error aborts without writing.
	UpdateLease(ctx context.Context, key string, fn func(Lease) (Lease, error)) (Lease, error)
	// CreateJobRun records a run as it starts.
	CreateJobRun(ctx context.Context, run *JobRun) error
	// FinishJobRun records how a run ended.
	FinishJobRun(ctx context.Context, run *JobRun) error
	// FindJobRuns lists runs newest first; job nil means every job.
	FindJobRuns(ctx context.Context, job *JobName, page Page) (*JobRunPage, error)
}
