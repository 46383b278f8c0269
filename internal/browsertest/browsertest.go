// Package browsertest drives a real headless Chromium (through
// github.com/chromedp/chromedp) against a server of the tests, with the
// network limited to loopback: every request the browser makes is
// recorded, and a test fails when one leaves the machine.
//
// Two layers keep the browser on loopback. Chromium sends every
// non-loopback request to a proxy on 127.0.0.1 that answers nothing but
// 502 and records what it was asked for (loopback addresses bypass a proxy
// in Chromium by default), so nothing leaves the machine; and the DevTools
// network events of the page record every URL it requests, including
// WebSocket handshakes. Either kind of record fails the test when it ends,
// except the proxy's records of the browser's own calls to Google services
// (browserServices), which no page made. So does an uncaught exception in
// the page. Either also ends the wait under way at once, so that such a
// test fails in seconds rather than at its deadline (ExpectExternal and
// ExpectExceptions are for tests that cause them on purpose).
//
// Screenshots are written to .artifacts/screenshots/ at the module's root
// (git-ignored; MEMBRANE_ARTIFACTS_DIR moves it), one when a test asks and
// one whenever a test fails; the test log names each file.
//
// Chromium must be installed: scripts/test.sh installs the Debian package
// when it is missing. MEMBRANE_CHROMIUM names another executable;
// MEMBRANE_BROWSER_TESTS=skip skips the browser tests instead of failing.
package browsertest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/membrane/membrane/internal/apptest"
)

// Timeout bounds each wait of a Browser: generous, as pages load on a
// busy machine that runs other tests beside a browser.
const Timeout = 90 * time.Second

// Browser is one headless Chromium with one tab, for one test.
type Browser struct {
	t   testing.TB
	ctx context.Context // the tab's

	mu         sync.Mutex
	requests   []string // every URL the page requested, in order
	external   []string // those that were not for loopback, and what the proxy saw
	exceptions []string // the page's uncaught exceptions
	console    []string // its console errors
	// broken is closed at the first external request or exception (unless
	// expected), which ends the wait under way: the test fails then rather
	// than at its deadline.
	broken                  chan struct{}
	expectExternal, expectX bool
	// background are the browser's own calls to Google services that its
	// flags do not turn off, refused by the proxy like any other.
	background []string
}

// New starts Chromium headless with its network limited to loopback and
// opens a blank tab. Both are closed when the test ends, after which the
// test fails if any non-loopback request was made (see TakeExternal).
func New(t testing.TB) *Browser {
	t.Helper()
	if os.Getenv("MEMBRANE_BROWSER_TESTS") == "skip" {
		t.Skip("MEMBRANE_BROWSER_TESTS=skip")
	}
	exe := chromium(t)
	b := &Browser{t: t, broken: make(chan struct{})}
	proxy := b.startProxy()
	dir := t.TempDir()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(dir),
		// Tests run as root in containers and CI, where Chromium's sandbox
		// cannot start; the browser only loads the tests' own pages.
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900),
		// Loopback bypasses the proxy by default; a bypass list of
		// "<-loopback>" would send it through the proxy too (tried).
		chromedp.ProxyServer("http://"+proxy),
		// No other traffic of the browser's own (updates, field trials).
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,"+
			"AutofillServerCommunication,NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,"+
			"CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx,
		chromedp.WithListener(b.listen),
		// chromedp reports protocol messages it cannot decode (newer
		// browsers than its protocol); they do not concern the tests.
		chromedp.WithErrorf(func(string, ...any) {}))
	b.ctx = ctx
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshot("failed")
		}
		cancelTab()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.background) > 0 {
			t.Logf("the browser's own background requests, refused by the proxy:\n%s", strings.Join(b.background, "\n"))
		}
		if len(b.console) > 0 {
			t.Logf("browser console errors:\n%s", strings.Join(b.console, "\n"))
		}
		if len(b.exceptions) > 0 {
			t.Errorf("the page threw %d uncaught exception(s):\n%s", len(b.exceptions), strings.Join(b.exceptions, "\n"))
		}
		if len(b.external) > 0 {
			t.Errorf("the browser made %d non-loopback request(s):\n%s", len(b.external), strings.Join(b.external, "\n"))
		}
	})
	// Start the browser and its tab now, so that a missing or broken
	// Chromium fails here, with its reason.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium (%s): %v", exe, err)
	}
	return b
}

// debianChromium is the browser of Debian's chromium package.
const debianChromium = "/usr/lib/chromium/chromium"

// chromium finds the browser executable.
func chromium(t testing.TB) string {
	t.Helper()
	if exe := os.Getenv("MEMBRANE_CHROMIUM"); exe != "" {
		return exe
	}
	// Debian's /usr/bin/chromium is a shell script that also hands the
	// browser Google API keys, which wake Google services up: run the
	// binary itself.
	if _, err := os.Stat(debianChromium); err == nil {
		return debianChromium
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if exe, err := exec.LookPath(name); err == nil {
			return exe
		}
	}
	t.Fatal("no Chromium found: run scripts/test.sh, which installs it (Debian package chromium), " +
		"or set MEMBRANE_CHROMIUM to its executable (MEMBRANE_BROWSER_TESTS=skip skips browser tests)")
	return ""
}

// startProxy listens on loopback as the browser's proxy: whatever reaches
// it was meant for another machine. It records the request line, answers
// 502 and closes the connection.
func (b *Browser) startProxy() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				line = "via proxy: " + strings.TrimSpace(line)
				b.mu.Lock()
				if browserService(line) {
					b.background = append(b.background, line)
				} else {
					b.addExternal(line)
				}
				b.mu.Unlock()
				_, _ = c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return l.Addr().String()
}

// browserServices are the hosts of Google services Chromium calls on its
// own (component updates, account and autofill services, network time)
// whatever its flags. The proxy refuses them like any other request, so
// nothing leaves the machine; they do not fail a test, since no page
// asked for them. A page's request to one of them still does: the page's
// network events record it.
var browserServices = []string{"update.googleapis.com", "accounts.google.com", "clients2.google.com",
	"content-autofill.googleapis.com", "optimizationguide-pa.googleapis.com", "redirector.gvt1.com"}

// browserService reports whether a request line the proxy received is for
// one of browserServices.
func browserService(line string) bool {
	for _, host := range browserServices {
		if strings.Contains(line, " "+host+":") || strings.Contains(line, "://"+host+"/") {
			return true
		}
	}
	return false
}

// listen records the tab's requests and console errors.
func (b *Browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.request(ev.Request.URL)
	case *network.EventWebSocketCreated:
		b.request(ev.URL)
	case *runtime.EventExceptionThrown:
		b.exceptions = append(b.exceptions, ev.ExceptionDetails.Text+exceptionDetail(ev.ExceptionDetails))
		if !b.expectX {
			b.breakOnce()
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			b.console = append(b.console, "console.error: "+strings.Join(parts, " "))
		}
	}
}

func exceptionDetail(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return " " + d.Exception.Description
	}
	return ""
}

// request records a URL the page asked for (b.mu held).
func (b *Browser) request(raw string) {
	b.requests = append(b.requests, raw)
	if !Loopback(raw) {
		b.addExternal(raw)
	}
}

// addExternal records a request that left loopback (b.mu held).
func (b *Browser) addExternal(what string) {
	b.external = append(b.external, what)
	if !b.expectExternal {
		b.breakOnce()
	}
}

// breakOnce ends the waits of a test whose page went wrong (b.mu held).
func (b *Browser) breakOnce() {
	select {
	case <-b.broken:
	default:
		close(b.broken)
	}
}

// Loopback reports whether a URL the browser requested stays on this
// machine: data:, blob: and about: URLs, and http(s) and ws(s) URLs for
// localhost or a loopback address.
func Loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	case "http", "https", "ws", "wss":
	default:
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Requests returns every URL the page has requested so far.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// ExpectExternal is for a test whose page requests other machines on
// purpose: such requests no longer end its waits early; TakeExternal
// returns them, and those it does not take still fail the test.
func (b *Browser) ExpectExternal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expectExternal = true
}

// TakeExternal returns the non-loopback requests recorded so far and
// forgets them, so that they no longer fail the test.
func (b *Browser) TakeExternal() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ext := b.external
	b.external = nil
	return ext
}

// ExpectExceptions is for a test whose page throws on purpose: uncaught
// exceptions no longer end its waits early; TakeExceptions returns them,
// and those it does not take still fail the test.
func (b *Browser) ExpectExceptions() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expectX = true
}

// TakeExceptions returns the page's uncaught exceptions so far and forgets
// them, so that they no longer fail the test.
func (b *Browser) TakeExceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	x := b.exceptions
	b.exceptions = nil
	return x
}

// run runs an action in the tab within Timeout, ended early when the page
// goes wrong (a non-loopback request or an uncaught exception, unless
// expected).
// retry runs it again when it failed for a JavaScript context just
// replaced (read-only actions only).
func run[T any](b *Browser, a chromedp.Action[T], retry bool) (T, error) {
	ctx, cancel := context.WithTimeoutCause(b.ctx, Timeout, fmt.Errorf("no result within %v", Timeout))
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-b.broken:
			cancel()
		case <-done:
		}
	}()
	v, err := chromedp.Run(ctx, a)
	// A script evaluated just as a page replaces its JavaScript context
	// (a navigation ending) finds it gone: evaluate again in the new one.
	for retry && err != nil && strings.Contains(err.Error(), "Cannot find context with specified id") && ctx.Err() == nil {
		v, err = chromedp.Run(ctx, a)
	}
	if err != nil {
		select {
		case <-b.broken:
			b.mu.Lock()
			defer b.mu.Unlock()
			err = fmt.Errorf("%w; stopped: the page went wrong (non-loopback requests: %q; exceptions: %q)",
				err, b.external, b.exceptions)
		default:
			if cause := context.Cause(ctx); cause != nil && cause != err {
				err = fmt.Errorf("%w (%v)", err, cause)
			}
		}
	}
	return v, err
}

// Context is the tab's context, for chromedp actions the helpers lack
// (prefer Do, which bounds them and stops when the page goes wrong).
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs chromedp actions in the tab within Timeout, failing the test
// on an error, or as soon as the page requests another machine or throws
// an uncaught exception (see ExpectExternal, ExpectExceptions).
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := run(b, chromedp.Steps(actions...), false); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Navigate opens a URL in the tab and waits for its load event.
func (b *Browser) Navigate(u string) {
	b.t.Helper()
	b.Do("navigate to "+u, chromedp.Navigate(u))
}

// WaitVisible waits until an element matching the CSS selector is
// visible.
func (b *Browser) WaitVisible(selector string) {
	b.t.Helper()
	b.Do("wait for "+selector+" to be visible", chromedp.WaitVisible(chromedp.CSS(selector)))
}

// Type focuses the first element matching the CSS selector, once visible,
// and types text into it as key presses.
func (b *Browser) Type(selector, text string) {
	b.t.Helper()
	b.Do("type into "+selector, chromedp.SendKeys(chromedp.CSS(selector), text, chromedp.NodeVisible))
}

// Click clicks the first element matching the CSS selector, once visible.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	b.Do("click "+selector, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

// WaitFor waits until a JavaScript expression is truthy in the page,
// evaluated on each animation frame and at once on each DOM change.
func (b *Browser) WaitFor(what, expression string) {
	b.t.Helper()
	if _, err := run(b, chromedp.Poll[chromedp.Void](expression, chromedp.WithPollingTimeout(Timeout)), true); err != nil {
		b.t.Fatalf("wait for %s (%s): %v", what, expression, err)
	}
}

// WaitText waits until the text of the first element matching the CSS
// selector contains want, and returns that text.
func (b *Browser) WaitText(selector, want string) string {
	b.t.Helper()
	b.WaitFor(fmt.Sprintf("%q to contain %q", selector, want),
		fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").includes(%q)`, selector, want))
	return b.Text(selector)
}

// Text returns the rendered text of the first element matching the CSS
// selector ("" when there is none).
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	return Eval[string](b, fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, selector))
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value into T.
func Eval[T any](b *Browser, expression string) T {
	b.t.Helper()
	v, err := run(b, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise), true)
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// Screenshot saves a PNG of the tab's viewport as a test artifact and
// returns its path, which the test log names.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	path, err := b.capture(name)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	return path
}

// screenshot saves one while the test is ending, logging instead of
// failing.
func (b *Browser) screenshot(name string) {
	if _, err := b.capture(name); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// capture takes a screenshot, also of a page that went wrong.
func (b *Browser) capture(name string) (string, error) {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	// On a busy machine the capture can land while the tab swaps its
	// document (a page stopped for going wrong): Chrome answers "Not
	// attached to an active page". Capture again once the new document
	// is attached (as run evaluates again in a new context), within the
	// capture's deadline.
	for err != nil && strings.Contains(err.Error(), "Not attached to an active page") && ctx.Err() == nil {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		return "", err
	}
	dir := ArtifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(b.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "", err
	}
	b.t.Logf("screenshot: %s", path)
	return path, nil
}

// ArtifactsDir is where screenshots go: MEMBRANE_ARTIFACTS_DIR/screenshots,
// or .artifacts/screenshots at the module's root.
func ArtifactsDir() string {
	if dir := os.Getenv("MEMBRANE_ARTIFACTS_DIR"); dir != "" {
		return filepath.Join(dir, "screenshots")
	}
	return filepath.Join(apptest.RepoRoot(), ".artifacts", "screenshots")
}
