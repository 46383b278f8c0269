package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerProcess builds and runs the real server binary against the test
// Neo4j: it must become ready, serve GraphQL and shut down cleanly on SIGTERM.
func TestServerProcess(t *testing.T) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Fatal("NEO4J_URI is not set: run the suite with scripts/test.sh")
	}
	bin := filepath.Join(t.TempDir(), "membrane")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	cmd := exec.Command(bin, "-listen", addr)
	cmd.Env = append(os.Environ(), "NEO4J_URI="+uri)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Wait for the "listening" log line (the server logs it once the
	// listener goroutine starts), bounded by a timer.
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var logs []string
	timeout := time.After(90 * time.Second)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("server exited before listening:\n%s", strings.Join(logs, "\n"))
			}
			logs = append(logs, line)
			if strings.Contains(line, "membrane listening") {
				break wait
			}
		case <-timeout:
			t.Fatalf("server did not start:\n%s", strings.Join(logs, "\n"))
		}
	}
	go func() {
		for range lines { // keep draining so the server never blocks on stderr
		}
	}()

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d %s", code, body)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, "ready") {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "graphiql") && !strings.Contains(body, "GraphiQL") {
		t.Fatalf("GraphiQL page = %d", code)
	}
	q, _ := json.Marshal(map[string]any{"query": `mutation { ingestEvent(input: {source: "smoke", eventKind: "k", ref: "r", scope: "test:server-process"}) { id type } }`})
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", bytes.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"type":"EPISODIC"`) {
		t.Fatalf("mutation = %d %s", resp.StatusCode, b)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s of SIGTERM")
	}
}
