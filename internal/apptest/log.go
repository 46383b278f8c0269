package apptest

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Log keeps a server's log lines, in-process or read from a process's
// stderr, for tests to wait on and for failure messages. It is an
// io.Writer; writes after the server ended are dropped.
type Log struct {
	mu      sync.Mutex
	lines   []string
	partial string
	// more is closed (and replaced) when a line is added or the log ends.
	more  chan struct{}
	ended bool
}

// NewLog returns an empty log. The harness makes one per server run;
// tests that run a Main of their own may use one too.
func NewLog() *Log { return &Log{more: make(chan struct{})} }

// Write adds the complete lines of p; a line split over writes is joined.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return len(p), nil
	}
	text := l.partial + string(p)
	parts := strings.Split(text, "\n")
	l.partial = parts[len(parts)-1]
	if n := len(parts) - 1; n > 0 {
		l.lines = append(l.lines, parts[:n]...)
		l.wake()
	}
	return len(p), nil
}

// End marks the log complete: the server has exited. Later writes are
// dropped.
func (l *Log) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if l.partial != "" {
		l.lines = append(l.lines, l.partial)
		l.partial = ""
	}
	l.ended = true
	l.wake()
}

// wake tells the waiters that the log changed; l.mu is held.
func (l *Log) wake() {
	close(l.more)
	l.more = make(chan struct{})
}

// Since returns the lines from index i on, whether the log has ended, and
// a channel that is closed once there is more to read (when it has not).
func (l *Log) Since(i int) (lines []string, ended bool, more <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < len(l.lines) {
		lines = append(lines, l.lines[i:]...)
	}
	return lines, l.ended, l.more
}

// Lines returns every line so far.
func (l *Log) Lines() []string {
	lines, _, _ := l.Since(0)
	return lines
}

// String is the log so far, for failure messages.
func (l *Log) String() string { return strings.Join(l.Lines(), "\n") }

// Await waits until a line from index from on contains s and returns the
// index after it. It fails the test when the log ends first or after
// timeout (a generous protocol bound).
func (l *Log) Await(t testing.TB, from int, s string, timeout time.Duration) int {
	t.Helper()
	deadline := time.After(timeout)
	for {
		lines, ended, more := l.Since(from)
		for i, line := range lines {
			if strings.Contains(line, s) {
				return from + i + 1
			}
		}
		from += len(lines)
		if ended {
			t.Fatalf("server exited before logging %q:\n%s", s, l)
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("server did not log %q within %s:\n%s", s, timeout, l)
		}
	}
}
