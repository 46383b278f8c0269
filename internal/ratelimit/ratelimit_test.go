package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/ratelimit"
)

// t0 is the bucket tests' first instant; at(d) is d after it.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// bucketTake is one take from a bucket, under limit at the time at: of n
// tokens (TakeN), or of one (Take) when n is 0; and what it must answer.
type bucketTake struct {
	limit ratelimit.Limit
	at    time.Time
	n     int
	ok    bool
	retry time.Duration
}

// checkTakes makes takes in order from a new bucket, in a subtest named
// name, each given as a bucketTake by conv.
func checkTakes[T any](t *testing.T, name string, takes []T, conv func(T) bucketTake) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		var b ratelimit.Bucket
		for i, tt := range takes {
			tk := conv(tt)
			var ok bool
			var retry time.Duration
			if tk.n == 0 {
				ok, retry = b.Take(tk.limit, tk.at)
			} else {
				ok, retry = b.TakeN(tk.limit, tk.at, tk.n)
			}
			if ok != tk.ok || retry != tk.retry {
				t.Fatalf("take %d (n %d) = %v, %v; want %v, %v", i, tk.n, ok, retry, tk.ok, tk.retry)
			}
		}
	})
}

// TestBucketTake: takes of one token (Take, n 0) and of n tokens (TakeN,
// all or none, a refusal's wait until all n are there) from a new bucket.
func TestBucketTake(t *testing.T) {
	type take struct {
		at    time.Time
		n     int
		ok    bool
		retry time.Duration
	}
	tests := []struct {
		name  string
		limit ratelimit.Limit
		takes []take
	}{
		{"unlimited", ratelimit.Limit{}, []take{{t0, 0, true, 0}, {t0, 0, true, 0}, {t0, 0, true, 0}}},
		{"a new bucket is full", ratelimit.Limit{Rate: 1, Burst: 3}, []take{
			{t0, 0, true, 0}, {t0, 0, true, 0}, {t0, 0, true, 0}, {t0, 0, false, time.Second}}},
		{"refills at the rate", ratelimit.Limit{Rate: 2, Burst: 1}, []take{
			{t0, 0, true, 0}, {t0, 0, false, 500 * time.Millisecond},
			{at(250 * time.Millisecond), 0, false, 250 * time.Millisecond},
			{at(500 * time.Millisecond), 0, true, 0}}},
		{"never above burst", ratelimit.Limit{Rate: 10, Burst: 2}, []take{
			{t0, 0, true, 0}, {at(time.Hour), 0, true, 0}, {at(time.Hour), 0, true, 0},
			{at(time.Hour), 0, false, 100 * time.Millisecond}}},
		{"burst below one is one", ratelimit.Limit{Rate: 1, Burst: 0}, []take{
			{t0, 0, true, 0}, {t0, 0, false, time.Second}}},
		{"slow rate waits long", ratelimit.Limit{Rate: 0.1, Burst: 1}, []take{
			{t0, 0, true, 0}, {at(time.Second), 0, false, 9 * time.Second}}},
		{"a clock going back refills nothing", ratelimit.Limit{Rate: 1, Burst: 1}, []take{
			{at(time.Minute), 0, true, 0}, {t0, 0, false, time.Second}, {at(time.Minute + time.Second), 0, true, 0}}},
		{"a charge behind the clock refills nothing later", ratelimit.Limit{Rate: 1, Burst: 2}, []take{
			{at(time.Minute), 0, true, 0}, {t0, 0, true, 0}, {at(time.Minute), 0, false, time.Second}}},
		{"unlimited, n tokens", ratelimit.Limit{}, []take{{t0, 1 << 30, true, 0}}},
		{"all or none", ratelimit.Limit{Rate: 10, Burst: 100}, []take{
			{t0, 60, true, 0}, {t0, 60, false, 2 * time.Second}, {t0, 40, true, 0}, {t0, 1, false, 100 * time.Millisecond}}},
		{"the wait is for all n", ratelimit.Limit{Rate: 4, Burst: 8}, []take{
			{t0, 8, true, 0}, {at(time.Second), 8, false, time.Second}, {at(2 * time.Second), 8, true, 0}}},
		{"more than the burst waits for a full bucket, and never passes", ratelimit.Limit{Rate: 1, Burst: 4}, []take{
			{t0, 2, true, 0}, {t0, 5, false, 2 * time.Second}, {at(time.Hour), 5, false, 0}, {at(time.Hour), 4, true, 0}}},
	}
	for _, tt := range tests {
		checkTakes(t, tt.name, tt.takes, func(tk take) bucketTake { return bucketTake{tt.limit, tk.at, tk.n, tk.ok, tk.retry} })
	}
}

func TestBucketLimitChanges(t *testing.T) {
	slow, fast := ratelimit.Limit{Rate: 1, Burst: 1}, ratelimit.Limit{Rate: 10, Burst: 1}
	type take struct {
		limit ratelimit.Limit
		at    time.Time
		ok    bool
		retry time.Duration
	}
	tests := []struct {
		name  string
		takes []take
	}{
		{"a faster rate refills the time since the last charge", []take{
			{slow, t0, true, 0}, {fast, at(100 * time.Millisecond), true, 0}}},
		{"a slower rate refills the time since the last charge", []take{
			{fast, t0, true, 0}, {slow, at(100 * time.Millisecond), false, 900 * time.Millisecond}}},
		{"the tokens held carry over", []take{
			{fast, t0, true, 0}, {fast, at(50 * time.Millisecond), false, 50 * time.Millisecond},
			{slow, at(50 * time.Millisecond), false, 500 * time.Millisecond}}},
		{"a larger burst fills as the time passes", []take{
			{slow, t0, true, 0}, {ratelimit.Limit{Rate: 1, Burst: 3}, at(time.Hour), true, 0},
			{ratelimit.Limit{Rate: 1, Burst: 3}, at(time.Hour), true, 0},
			{ratelimit.Limit{Rate: 1, Burst: 3}, at(time.Hour), true, 0},
			{ratelimit.Limit{Rate: 1, Burst: 3}, at(time.Hour), false, time.Second}}},
	}
	for _, tt := range tests {
		checkTakes(t, tt.name, tt.takes, func(tk take) bucketTake { return bucketTake{tk.limit, tk.at, 0, tk.ok, tk.retry} })
	}
}

func TestLimiterIsBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	one := ratelimit.Limit{Rate: 1, Burst: 1}
	tests := []struct {
		name string
		run  func(t *testing.T, l *ratelimit.Limiter)
	}{
		{"keys have their own buckets", func(t *testing.T, l *ratelimit.Limiter) {
			for _, k := range []string{"a", "b", "c"} {
				if ok, _ := l.Allow(k, one); !ok {
					t.Fatalf("%s refused", k)
				}
			}
			if ok, _ := l.Allow("a", one); ok {
				t.Fatal("a's second request allowed")
			}
		}},
		{"holds at most its size", func(t *testing.T, l *ratelimit.Limiter) {
			for i := range 1000 {
				l.Allow(fmt.Sprint("actor-", i), one)
			}
			if n := l.Len(); n != 3 {
				t.Fatalf("%d buckets", n)
			}
		}},
		{"drops the bucket idle longest", func(t *testing.T, l *ratelimit.Limiter) {
			l.Allow("a", one)
			l.Allow("b", one)
			l.Allow("c", one)
			l.Allow("a", one) // a is now the most recent; b is idle longest
			l.Allow("d", one) // drops b
			if ok, _ := l.Allow("a", one); ok {
				t.Fatal("a's bucket was dropped")
			}
			if ok, _ := l.Allow("b", one); !ok {
				t.Fatal("b's bucket was kept")
			}
		}},
		{"unlimited keys take no bucket", func(t *testing.T, l *ratelimit.Limiter) {
			l.Allow("a", ratelimit.Limit{})
			if n := l.Len(); n != 0 {
				t.Fatalf("%d buckets", n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, ratelimit.New(3, clock)) })
	}
}
