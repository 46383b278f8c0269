// Package safego starts the server's goroutines so that none can end the
// process: a panic in one is recovered, logged at ERROR with its stack
// (never shown to a client) and counted, and only that goroutine ends.
// net/http recovers the panics of request handlers, and gqlgen those of
// resolvers; a panic in any other goroutine would end the whole process,
// every client's requests with it (issue 15).
package safego

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

var (
	mu      sync.RWMutex
	log     *slog.Logger
	counter func(name string)
)

// Report sets where recovered panics are reported: log (nil:
// slog.Default()) and count (nil: not counted), called with the
// goroutine's name. The server sets it once, at start.
func Report(l *slog.Logger, count func(name string)) {
	mu.Lock()
	defer mu.Unlock()
	log, counter = l, count
}

// Go runs fn in a new goroutine that recovers its panic. name says what
// the goroutine does, for the log and the metric: a constant, never data
// of a request.
func Go(name string, fn func()) {
	go func() {
		defer Recover(name)
		fn()
	}()
}

// Recover, deferred first in a goroutine, recovers and reports its panic.
// It must be called directly by defer (recover works only there).
func Recover(name string) {
	if p := recover(); p != nil {
		Recovered(name, p)
	}
}

// Recovered reports p, a panic recovered in where (a fixed name), with the
// current stack and the attributes args (slog's key-value pairs): for
// recovers of other libraries, such as gqlgen's of resolvers.
func Recovered(where string, p any, args ...any) {
	mu.RLock()
	l, count := log, counter
	mu.RUnlock()
	if l == nil {
		l = slog.Default()
	}
	l.Error("panic recovered; the process goes on",
		append([]any{"where", where, "panic", fmt.Sprint(p), "stack", string(debug.Stack())}, args...)...)
	if count != nil {
		count(where)
	}
}

// GoErr runs fn in a new goroutine and sends its result to errc; a panic is
// reported like Go's and sent as an error, so that whoever waits on errc
// (the server's listener, its shutdown) is never left waiting for a
// goroutine that died. errc must have room for the send.
func GoErr(name string, errc chan<- error, fn func() error) {
	go func() {
		defer func() {
			if p := recover(); p != nil {
				Recovered(name, p)
				errc <- fmt.Errorf("%s: panic: %v", name, p)
			}
		}()
		errc <- fn()
	}()
}
