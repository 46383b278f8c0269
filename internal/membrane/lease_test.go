package membrane_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestLeaseAcquire(t *testing.T) {
	ttl := time.Minute
	slot := now.Truncate(time.Hour)
	earlier := slot.Add(-time.Hour)
	free := membrane.Lease{Key: "decay"}
	held := membrane.Lease{Key: "decay", Holder: "b", ExpiresAt: now.Add(time.Second)}
	expired := membrane.Lease{Key: "decay", Holder: "b", ExpiresAt: now}
	ran := membrane.Lease{Key: "decay", LastSlot: &slot}
	ranBefore := membrane.Lease{Key: "decay", LastSlot: &earlier}
	// The holder of a run of slot died: its lease expired, the slot did not run.
	died := membrane.Lease{Key: "decay", Holder: "b", ExpiresAt: now, Run: "r1", Slot: &slot, LastSlot: &earlier}
	tests := []struct {
		name   string
		l      membrane.Lease
		holder string
		slot   *time.Time
		ok     bool
	}{
		{"free, on demand", free, "a", nil, true},
		{"free, scheduled", free, "a", &slot, true},
		{"held by another", held, "a", nil, false},
		{"held by itself: a run is under way", held, "b", nil, false},
		{"expired at now", expired, "a", &slot, true},
		{"slot already run", ran, "a", &slot, false},
		{"an earlier slot", ran, "a", &earlier, false},
		{"a later slot", ranBefore, "a", &slot, true},
		{"on demand after a slot ran", ran, "a", nil, true},
		{"the slot of a dead holder's run", died, "a", &slot, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.l.Acquire(tt.holder, "run", tt.slot, now, ttl)
			if (err == nil) != tt.ok {
				t.Fatalf("Acquire = %+v, %v; want ok=%v", got, err, tt.ok)
			}
			if !tt.ok {
				if membrane.ErrorCode(err) != membrane.ECONFLICT || got != tt.l {
					t.Fatalf("refused Acquire = %+v, %v; want the lease unchanged and CONFLICT", got, err)
				}
				return
			}
			if got.Holder != tt.holder || got.Run != "run" || !got.ExpiresAt.Equal(now.Add(ttl)) || got.LastSlot != tt.l.LastSlot {
				t.Fatalf("granted %+v", got)
			}
			if tt.slot != nil && !got.Slot.Equal(*tt.slot) || tt.slot == nil && got.Slot != nil {
				t.Fatalf("granted lease slot %v for run slot %v", got.Slot, tt.slot)
			}
			// The slot counts as run once the run ends, not before.
			if rel := got.Release(tt.holder); tt.slot != nil && !rel.Ran(*tt.slot) || tt.slot == nil && rel.LastSlot != tt.l.LastSlot ||
				rel.Holder != "" || rel.Run != "" || rel.Slot != nil {
				t.Fatalf("released %+v", rel)
			}
		})
	}
}

func TestLeaseExpire(t *testing.T) {
	slot := now.Truncate(time.Hour)
	live := membrane.Lease{Key: "k", Holder: "a", ExpiresAt: now.Add(time.Second), Run: "r", Slot: &slot}
	if got := live.Expire(now); got.Holder != "a" || got.Run != "r" {
		t.Fatalf("Expire freed a live lease: %+v", got)
	}
	dead := live
	dead.ExpiresAt = now
	got := dead.Expire(now)
	if got.Holder != "" || got.Run != "" || got.Slot != nil || got.Ran(slot) {
		t.Fatalf("Expire of a dead holder's lease = %+v; want it free and the slot not run", got)
	}
	// The dead holder cannot renew or release it any more.
	if _, err := got.Renew("a", now, time.Minute); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("renew after expiry: %v", err)
	}
	if rel := got.Release("a"); rel.Ran(slot) {
		t.Fatalf("release after expiry counted the slot: %+v", rel)
	}
}

func TestLeaseRenewRelease(t *testing.T) {
	l := membrane.Lease{Key: "k", Holder: "a", ExpiresAt: now}
	r, err := l.Renew("a", now.Add(time.Second), time.Minute)
	if err != nil || !r.ExpiresAt.Equal(now.Add(time.Second+time.Minute)) {
		t.Fatalf("Renew = %+v, %v", r, err)
	}
	if _, err := l.Renew("b", now, time.Minute); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("renew by a non-holder: %v", err)
	}
	if got := l.Release("b"); got.Holder != "a" {
		t.Fatalf("release by a non-holder freed the lease")
	}
	if got := l.Release("a"); got.Holder != "" {
		t.Fatalf("release kept holder %q", got.Holder)
	}
}

func TestLeaseKey(t *testing.T) {
	if membrane.LeaseKey(membrane.JobDecay, nil) != "decay" {
		t.Fatal("unrestricted key")
	}
	a := membrane.LeaseKey(membrane.JobDecay, []string{"x", "y"})
	if a != membrane.LeaseKey(membrane.JobDecay, []string{"y", "x"}) || a == membrane.LeaseKey(membrane.JobDecay, []string{"x"}) ||
		a == membrane.LeaseKey(membrane.JobPrune, []string{"x", "y"}) || a == "decay" {
		t.Fatalf("scoped keys must depend on the job and the set of scopes only: %s", a)
	}
}
