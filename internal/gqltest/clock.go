package gqltest

import (
	"sync"
	"time"
)

// Clock is a clock a test sets, to inject as the API's and the job
// runner's Now. The zero value reads the zero time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock that reads t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
