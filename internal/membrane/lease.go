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
	// Run is the id of the holder's run, "" when free. A run no lease
	// names any more and that recorded no end was abandoned.
	Run string
	// Slot is the schedule slot the holder's run is for; nil when free or
	// for a run on demand.
	Slot *time.Time
	// LastSlot is the latest schedule slot whose run ended (its holder
	// released the lease), so that processes firing for one slot run it
	// once. A manual run never moves it, and neither does a run whose
	// holder died: that slot may run again.
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

// Acquire grants l to holder's run at now for ttl, for a run of slot (nil
// for a run on demand). It is ECONFLICT while another holder's lease has
// not expired, while holder itself holds it (a run is under way), or when
// slot already ran (Ran). Taking over an expired lease abandons the run it
// named.
func (l Lease) Acquire(holder, run string, slot *time.Time, now time.Time, ttl time.Duration) (Lease, error) {
	if l.Held(now) {
		return l, Errorf(ECONFLICT, "job %s is running on %s (lease until %s)", l.Key, l.Holder, l.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if slot != nil && l.Ran(*slot) {
		return l, Errorf(ECONFLICT, "job %s already ran for the slot %s", l.Key, slot.UTC().Format(time.RFC3339))
	}
	n := Lease{Key: l.Key, Holder: holder, ExpiresAt: now.Add(ttl).UTC(), Run: run, LastSlot: l.LastSlot}
	if slot != nil {
		s := slot.UTC()
		n.Slot = &s
	}
	return n, nil
}

// Held reports whether a run holds l at now: a holder whose lease has not
// expired.
func (l Lease) Held(now time.Time) bool { return l.Holder != "" && now.Before(l.ExpiresAt) }

// Ran reports whether a run of slot, or of a later slot, ended: firing for
// slot has nothing left to do. A slot whose run was abandoned did not run.
func (l Lease) Ran(slot time.Time) bool { return l.LastSlot != nil && !slot.After(*l.LastSlot) }

// Expire frees l when its holder let it expire by now (the process died
// without releasing it): its run, which no lease names any more, is then
// abandoned and its slot may run again. A live lease is left alone.
func (l Lease) Expire(now time.Time) Lease {
	if l.Holder == "" || l.Held(now) {
		return l
	}
	return Lease{Key: l.Key, LastSlot: l.LastSlot}
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

// Release frees holder's lease as its run ended, which counts the run's
// slot as run; a lease held by someone else (it expired and was taken
// over, and this run was abandoned) is left alone.
func (l Lease) Release(holder string) Lease {
	if l.Holder != holder {
		return l
	}
	n := Lease{Key: l.Key, LastSlot: l.LastSlot}
	if l.Slot != nil && !l.Ran(*l.Slot) {
		n.LastSlot = l.Slot
	}
	return n
}

// LeaseStore keeps leases and job runs. Implemented by the neo4j package.
type LeaseStore interface {
	// UpdateLease reads lease key under a write lock (a free lease when it
	// does not exist yet), applies fn and writes the result, in one
	// transaction; fn's error aborts without writing.
	UpdateLease(ctx context.Context, key string, fn func(Lease) (Lease, error)) (Lease, error)
	// CreateJobRun records a run as it starts.
	CreateJobRun(ctx context.Context, run *JobRun) error
	// FinishJobRun records how a run ended, unless it was marked
	// abandoned meanwhile (its holder lost the lease): that stays.
	FinishJobRun(ctx context.Context, run *JobRun) error
	// FindJobRuns lists runs newest first; job nil means every job.
	FindJobRuns(ctx context.Context, job *JobName, page Page) (*JobRunPage, error)
	// AbandonJobRuns marks abandoned, finished at now, every run of the
	// leases keys that recorded no end and that no lease names any more
	// (see Lease.Expire); it returns how many it marked.
	AbandonJobRuns(ctx context.Context, keys []string, now time.Time) (int64, error)
}
