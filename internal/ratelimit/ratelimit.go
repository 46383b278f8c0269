// Package ratelimit limits the rate of requests per key with token buckets:
// golang.org/x/time/rate's Limiter for the bucket arithmetic (on a time
// passed in, so tests drive the clock) and a least recently used set of
// buckets from github.com/hashicorp/golang-lru/v2 to keep their number
// bounded. What it adds is the refusal's wait, for Retry-After, and a clock
// that never runs backwards for a bucket.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// Limit is a rate of Rate tokens per second with bursts of up to Burst. A
// zero Rate is no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// Unlimited reports whether l lets everything through.
func (l Limit) Unlimited() bool { return l.Rate <= 0 }

// burst is l's burst, at least one token: a bucket that could never hold a
// token would refuse every request forever.
func (l Limit) burst() int { return max(l.Burst, 1) }

// Bucket is one token bucket. The zero Bucket is full.
type Bucket struct {
	lim *rate.Limiter
	// last is the latest instant the bucket was charged at. rate.Limiter
	// moves its own refill point back to an earlier instant it is charged
	// at, which would refill the time between twice; charging at last
	// instead refills nothing while the clock is behind.
	last time.Time
}

// Take takes a token from b at now under limit l. It reports whether there
// was one and, when there was not, how long until there is. A clock that
// went backwards refills nothing.
func (b *Bucket) Take(l Limit, now time.Time) (ok bool, retryAfter time.Duration) {
	return b.TakeN(l, now, 1)
}

// TakeN takes n tokens from b at now under limit l, all or none, as Take
// takes one. n is at most l's burst: more could never be taken, and are
// refused with the wait a full bucket would need.
func (b *Bucket) TakeN(l Limit, now time.Time, n int) (ok bool, retryAfter time.Duration) {
	if l.Unlimited() {
		return true, 0
	}
	prev := b.last
	if now.Before(prev) {
		now = prev
	}
	b.last = now
	switch {
	case b.lim == nil:
		b.lim = rate.NewLimiter(rate.Limit(l.Rate), l.burst())
	default:
		// A key's limit changes with its principal's role. Changed as of
		// the previous charge, the tokens held then carry over and the
		// time since refills at the new limit.
		if b.lim.Limit() != rate.Limit(l.Rate) {
			b.lim.SetLimitAt(prev, rate.Limit(l.Rate))
		}
		if b.lim.Burst() != l.burst() {
			b.lim.SetBurstAt(prev, l.burst())
		}
	}
	if b.lim.AllowN(now, n) {
		return true, 0
	}
	// Rounded up: a client retrying after the wait finds its tokens.
	wait := (float64(min(n, l.burst())) - b.lim.TokensAt(now)) / l.Rate
	return false, time.Duration(math.Ceil(wait * float64(time.Second)))
}

// Limiter holds one bucket per key, at most max of them: when a new key
// would exceed that, the bucket idle longest is dropped. Dropping it
// forgets what that key owed, so the bound should exceed the number of keys
// active at once (principals, here), which keeps memory bounded whatever
// the number of keys seen over time.
type Limiter struct {
	mu      sync.Mutex // guards buckets and every Bucket in it
	now     func() time.Time
	buckets *simplelru.LRU[string, *Bucket]
}

// New returns a Limiter of at most size buckets (at least 1) on the clock
// now.
func New(size int, now func() time.Time) *Limiter {
	buckets, err := simplelru.NewLRU[string, *Bucket](max(size, 1), nil)
	if err != nil {
		// NewLRU fails only for a size below 1, which max rules out.
		panic(err)
	}
	return &Limiter{now: now, buckets: buckets}
}

// Allow takes a token of key's bucket under l; see Bucket.Take.
func (r *Limiter) Allow(key string, l Limit) (bool, time.Duration) {
	return r.AllowN(key, l, 1)
}

// AllowN takes n tokens of key's bucket under l; see Bucket.TakeN.
func (r *Limiter) AllowN(key string, l Limit, n int) (bool, time.Duration) {
	if l.Unlimited() {
		return true, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets.Get(key) // Get marks the key most recently used
	if !ok {
		b = &Bucket{}
		r.buckets.Add(key, b) // evicts the bucket idle longest when full
	}
	return b.TakeN(l, r.now(), n)
}

// Len returns how many buckets are held.
func (r *Limiter) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buckets.Len()
}
