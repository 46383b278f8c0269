// Package ratelimit limits the rate of requests per key with token buckets.
// The bucket arithmetic is pure (it takes the time as an argument); the
// Limiter keeps a bounded set of buckets, one per key.
package ratelimit

import (
	"container/list"
	"math"
	"sync"
	"time"
)

// Limit is a rate of Rate tokens per second with bursts of up to Burst. A
// zero Rate is no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// Unlimited reports whether l lets everything through.
func (l Limit) Unlimited() bool { return l.Rate <= 0 }

// Bucket is one token bucket. The zero Bucket is full.
type Bucket struct {
	tokens float64
	last   time.Time
}

// Take takes a token from b at now under limit l. It reports whether there
// was one and, when there was not, how long until there is. A clock that
// went backwards refills nothing.
func (b *Bucket) Take(l Limit, now time.Time) (ok bool, retryAfter time.Duration) {
	if l.Unlimited() {
		return true, 0
	}
	burst := float64(max(l.Burst, 1))
	switch {
	case b.last.IsZero():
		b.tokens, b.last = burst, now
	case now.After(b.last):
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*l.Rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := (1 - b.tokens) / l.Rate
	return false, time.Duration(math.Ceil(wait * float64(time.Second)))
}

// Limiter holds one bucket per key, at most max of them: when a new key
// would exceed that, the bucket idle longest is dropped. Dropping it
// forgets what that key owed, so the bound should exceed the number of keys
// active at once (principals, here), which keeps memory bounded whatever
// the number of keys seen over time.
type Limiter struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	buckets map[string]*list.Element
	idle    *list.List // of *entry, most recently used first
}

type entry struct {
	key    string
	bucket Bucket
}

// New returns a Limiter of at most size buckets (at least 1) on the clock
// now.
func New(size int, now func() time.Time) *Limiter {
	return &Limiter{max: max(size, 1), now: now, buckets: map[string]*list.Element{}, idle: list.New()}
}

// Allow takes a token of key's bucket under l; see Bucket.Take.
func (r *Limiter) Allow(key string, l Limit) (bool, time.Duration) {
	if l.Unlimited() {
		return true, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	el, ok := r.buckets[key]
	if ok {
		r.idle.MoveToFront(el)
	} else {
		for r.idle.Len() >= r.max {
			oldest := r.idle.Back()
			delete(r.buckets, oldest.Value.(*entry).key)
			r.idle.Remove(oldest)
		}
		el = r.idle.PushFront(&entry{key: key})
		r.buckets[key] = el
	}
	return el.Value.(*entry).bucket.Take(l, r.now())
}

// Len returns how many buckets are held.
func (r *Limiter) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idle.Len()
}
