package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/membrane/membrane/internal/browsertest"
)

// pages serves the harness tests' pages on loopback: path -> HTML, and
// /local.js, a script of the same server.
func pages(t *testing.T, html map[string]string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/local.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `window.localLoaded = true;`)
			return
		}
		page, ok := html[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><title>page</title><script src="/local.js"></script>`+page)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// TestHarnessFailsAPageThatGoesWrong: a page that requests another
// machine, or throws, fails its test, at the wait under way (not at its
// deadline) and again when the test ends, naming what happened, with a
// screenshot; a page that stays on loopback passes.
func TestHarnessFailsAPageThatGoesWrong(t *testing.T) {
	base := pages(t, map[string]string{
		"/cdn":       `<script src="https://cdn.jsdelivr.net/npm/react@18.2.0/umd/react.production.min.js"></script>`,
		"/image":     `<img src="http://example.com/pixel.png">`,
		"/websocket": `<script>new WebSocket("wss://example.com/graphql")</script>`,
		"/throws":    `<script>throw new Error("boom-in-page")</script>`,
		"/fine":      `<p id="ok">fine</p>`,
	})
	tests := []struct {
		page        string
		wantFatal   string   // in the failure of the wait ("" for none)
		wantAtEnd   []string // in the failures when the test ends
		wantRequest string   // a request the harness recorded
	}{
		{"/cdn", "stopped: the page went wrong", []string{
			"https://cdn.jsdelivr.net/npm/react@18.2.0/umd/react.production.min.js",
			"via proxy: CONNECT cdn.jsdelivr.net:443"}, ""},
		{"/image", "stopped: the page went wrong", []string{
			"http://example.com/pixel.png", "via proxy: GET http://example.com/pixel.png"}, ""},
		{"/websocket", "stopped: the page went wrong", []string{"wss://example.com/graphql"}, ""},
		{"/throws", "stopped: the page went wrong", []string{"uncaught exception", "boom-in-page"}, ""},
		{"/fine", "", nil, base + "/local.js"},
	}
	for _, tt := range tests {
		t.Run(tt.page[1:], func(t *testing.T) {
			// The screenshot of each failure, expected here, goes to the
			// test's own folder rather than among the artifacts.
			artifacts := t.TempDir()
			t.Setenv("MEMBRANE_ARTIFACTS_DIR", artifacts)
			r := &recorder{TB: t}
			r.run(func() {
				b := browsertest.New(r)
				b.Navigate(base + tt.page)
				b.WaitFor("the local script and the page's end", `window.localLoaded === true && document.readyState === "complete"`)
				b.WaitVisible("#ok") // a page that went wrong never gets here
				if tt.wantRequest != "" && !slices.Contains(b.Requests(), tt.wantRequest) {
					t.Errorf("requests %q miss %s", b.Requests(), tt.wantRequest)
				}
			})
			if tt.wantFatal == "" {
				if len(r.failures) > 0 {
					t.Fatalf("a page on loopback failed: %q", r.failures)
				}
				return
			}
			shot := filepath.Join(artifacts, "screenshots", strings.ReplaceAll(t.Name(), "/", "_")+"-failed.png")
			if _, err := os.Stat(shot); err != nil {
				t.Errorf("no screenshot of the failure: %v", err)
			}
			if len(r.failures) == 0 || !strings.Contains(r.failures[0], tt.wantFatal) {
				t.Fatalf("first failure %q, want one with %q", r.failures, tt.wantFatal)
			}
			atEnd := strings.Join(r.failures[1:], "\n")
			for _, want := range tt.wantAtEnd {
				if !strings.Contains(atEnd, want) {
					t.Errorf("failures when the test ended miss %q:\n%s", want, atEnd)
				}
			}
		})
	}
}

// TestExpectExternal: a test that requests another machine on purpose
// takes the records, and passes.
func TestExpectExternal(t *testing.T) {
	base := pages(t, map[string]string{"/": `<img src="http://example.com/pixel.png">`})
	b := browsertest.New(t)
	b.ExpectExternal()
	b.Navigate(base + "/")
	b.WaitFor("the page to load", `document.readyState === "complete" && window.localLoaded === true`)
	external := b.TakeExternal()
	for _, want := range []string{"http://example.com/pixel.png", "via proxy: GET http://example.com/pixel.png"} {
		if !slices.ContainsFunc(external, func(e string) bool { return strings.HasPrefix(e, want) }) {
			t.Errorf("not recorded: %s; recorded:\n%s", want, strings.Join(external, "\n"))
		}
	}
	for _, e := range external {
		if strings.Contains(e, strings.TrimPrefix(base, "http://")) {
			t.Errorf("a loopback request was recorded as external: %s", e)
		}
	}
}

// recorder is a testing.TB whose failures are recorded instead of failing
// the test, and whose cleanups run when its body ends: a harness test
// checks that the harness fails a test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, msg)
}

func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) {
	r.fail(fmt.Sprint(args...))
	runtime.Goexit()
}
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// run runs body as a test would, on a goroutine of its own (Fatal ends
// it), then the cleanups it registered, last first.
func (r *recorder) run(body func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
