package safego_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/safego"
)

// syncBuffer is a log sink written from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGoRecovers: a goroutine started with Go that panics ends alone: the
// test process goes on, the panic is logged at ERROR with its stack and
// counted under the goroutine's name. Without the recover the whole test
// binary dies.
func TestGoRecovers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		panic func()
	}{
		{"value", func() { panic("boom") }},
		{"nil map", func() {
			var m map[string]int
			m["x"] = 1
		}},
		{"error", func() { panic(bytes.ErrTooLarge) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			counted := make(chan string, 1)
			safego.Report(slog.New(slog.NewJSONHandler(logs, nil)), func(name string) { counted <- name })
			t.Cleanup(func() { safego.Report(nil, nil) })
			safego.Go("test goroutine", tc.panic)
			select {
			case name := <-counted:
				if name != "test goroutine" {
					t.Fatalf("counted %q, want the goroutine's name", name)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the panic was not counted")
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &line); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if line["level"] != "ERROR" || line["where"] != "test goroutine" || line["panic"] == "" ||
				!strings.Contains(line["stack"].(string), "safego_test") {
				t.Fatalf("logged %v, want an ERROR naming the goroutine with the panic and its stack", line)
			}
		})
	}
}

// TestGoRunsToCompletion: a goroutine that does not panic is neither
// logged nor counted.
func TestGoRunsToCompletion(t *testing.T) {
	logs := &syncBuffer{}
	counts := 0
	safego.Report(slog.New(slog.NewJSONHandler(logs, nil)), func(string) { counts++ })
	t.Cleanup(func() { safego.Report(nil, nil) })
	done := make(chan struct{})
	safego.Go("fine", func() { close(done) })
	<-done
	if logs.String() != "" || counts != 0 {
		t.Fatalf("logged %q, counted %d; want nothing", logs.String(), counts)
	}
}

// TestGoErrSendsAPanic: whoever waits for a GoErr goroutine's result gets
// one even when it panics (the server's listener and shutdown wait so; a
// swallowed panic would hang the process), and a plain result passes.
func TestGoErrSendsAPanic(t *testing.T) {
	safego.Report(slog.New(slog.NewJSONHandler(&syncBuffer{}, nil)), nil)
	t.Cleanup(func() { safego.Report(nil, nil) })
	for _, tc := range []struct {
		name string
		fn   func() error
		want string
	}{
		{"panic", func() error { panic("boom") }, "listener: panic: boom"},
		{"error", func() error { return bytes.ErrTooLarge }, bytes.ErrTooLarge.Error()},
		{"nil", func() error { return nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errc := make(chan error, 1)
			safego.GoErr("listener", errc, tc.fn)
			select {
			case err := <-errc:
				if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
					t.Fatalf("got %v, want %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no result: the waiter would hang")
			}
		})
	}
}
