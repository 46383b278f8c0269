package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// start runs a server in-process against the test Neo4j with env added,
// with the test suite's encryption key (the shared database holds records
// other tests sealed with it; the server reads some at start). Every
// server a test starts has its jobs off or restricted to the test's scope:
// the database is shared with tests that assert exact salience values.
func start(t *testing.T, env ...string) *apptest.Server {
	t.Helper()
	return apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey(), Env: env})
}

// startProcess is start with the server binary, for what needs a process:
// signals.
func startProcess(t *testing.T, env ...string) *apptest.Server {
	t.Helper()
	return apptest.StartProcess(t, apptest.Options{EncryptionKey: apptest.SealKey(), Env: env})
}

var jobsOff = []string{"MEMBRANE_JOBS_DECAY=off", "MEMBRANE_JOBS_PRUNE=off", "MEMBRANE_JOBS_CONSOLIDATE=off", "MEMBRANE_JOBS_EMBED=off"}

// TestServer runs the server (in-process) against the test Neo4j: it must
// become ready, serve GraphQL and shut down cleanly. TestGracefulShutdown
// runs the binary and stops it with SIGTERM.
func TestServer(t *testing.T) {
	scope := neo4jtest.Scope(t)
	p := start(t, append(jobsOff, "MEMBRANE_JOBS_SCOPES="+scope)...)
	addr := p.Addr

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
	q, _ := json.Marshal(map[string]any{"query": `mutation($s: String) { ingestEvent(input: {source: "smoke", eventKind: "k", ref: "r", scope: $s}) { id type } }`,
		"variables": map[string]any{"s": scope}})
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", bytes.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"type":"EPISODIC"`) {
		t.Fatalf("mutation = %d %s", resp.StatusCode, b)
	}
	p.Stop(t)
}

// TestLeaseAcrossServers runs two servers (in-process, each with its own
// driver and holder, as two processes have) against one database with the
// decay job scheduled every second (restricted to this test's scope): for
// every slot both fired for, exactly one ran it, and no two runs
// overlapped.
func TestLeaseAcrossServers(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	p := membrane.DefaultPolicy()
	var seed []*membrane.Ingested
	for i := 0; i < 20; i++ {
		r, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope,
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "s", Predicate: "p", Object: i}}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		seed = append(seed, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", time.Now())})
	}
	if _, err := db.CreateRecords(context.Background(), nil, seed); err != nil {
		t.Fatal(err)
	}

	env := []string{"MEMBRANE_LOG_FORMAT=json", "MEMBRANE_JOBS_DECAY=* * * * * *", "MEMBRANE_JOBS_PRUNE=off",
		"MEMBRANE_JOBS_CONSOLIDATE=off", "MEMBRANE_JOBS_SCOPES=" + scope}
	procs := []*apptest.Server{start(t, env...), start(t, env...)}

	// Read both logs until both servers reported on the same four slots
	// that ran (one ran it, the other skipped it because the first had it).
	type outcome struct{ finished, skipped int }
	slots := map[string]*[2]outcome{}
	common := func() int {
		n := 0
		for _, o := range slots {
			if o[0].finished+o[0].skipped > 0 && o[1].finished+o[1].skipped > 0 && o[0].finished+o[1].finished > 0 {
				n++
			}
		}
		return n
	}
	// When each slot's "job finished" line was logged: the runner releases
	// the lease after recording the run's end, so until this line a run
	// may still hold the lease its record says it finished with.
	finishedLogged := map[string]time.Time{}
	// Both logs are read as they grow, each from where it was left.
	read := [2]int{}
	var logs []string
	deadline := time.After(90 * time.Second)
	for common() < 4 {
		var more [2]<-chan struct{}
		for i, pr := range procs {
			lines, ended, ch := pr.Log.Since(read[i])
			read[i] += len(lines)
			if ended {
				t.Fatalf("a server ended while the test read its log:\n%s", pr.Log)
			}
			more[i] = ch
			for _, line := range lines {
				logs = append(logs, line)
				var entry struct {
					Msg, Job, Slot, Holder, Error string
					Time                          time.Time
				}
				if json.Unmarshal([]byte(line), &entry) != nil || entry.Job != "decay" {
					continue
				}
				if slots[entry.Slot] == nil {
					slots[entry.Slot] = &[2]outcome{}
				}
				switch entry.Msg {
				case "job finished":
					slots[entry.Slot][i].finished++
					finishedLogged[entry.Slot] = entry.Time
					if entry.Error != "" {
						t.Fatalf("a run failed: %s", line)
					}
				case "job skipped":
					slots[entry.Slot][i].skipped++
				case "job not run":
					t.Fatalf("a scheduled run failed: %s", line)
				}
			}
		}
		if common() >= 4 {
			break
		}
		select {
		case <-more[0]:
		case <-more[1]:
		case <-deadline:
			t.Fatalf("the servers did not both fire for 4 slots that ran:\n%s", strings.Join(logs, "\n"))
		}
	}
	for _, pr := range procs {
		pr.Stop(t)
	}

	// Slots both servers fired for and neither ran; checked below against
	// the recorded runs.
	var unrun []time.Time
	for slot, o := range slots {
		if o[0].finished+o[1].finished > 1 {
			t.Fatalf("slot %s ran on both servers: %+v", slot, o)
		}
		if o[0].finished+o[0].skipped > 0 && o[1].finished+o[1].skipped > 0 && o[0].finished+o[1].finished == 0 {
			at, err := time.Parse(time.RFC3339Nano, slot)
			if err != nil {
				t.Fatalf("slot %q: %v", slot, err)
			}
			unrun = append(unrun, at)
		}
	}

	// The recorded runs agree: one per slot, never overlapping.
	job := membrane.JobDecay
	var runs []*membrane.JobRun
	var after *string
	for {
		page, err := membrane.NewPage(new(int64(500)), after)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.FindJobRuns(context.Background(), &job, page)
		if err != nil {
			t.Fatal(err)
		}
		old := false
		for _, r := range got.Items {
			if len(r.Scopes) == 1 && r.Scopes[0] == scope {
				runs = append(runs, r)
			}
			old = old || time.Since(r.StartedAt) > 5*time.Minute
		}
		if !got.PageInfo.HasNextPage || old {
			break
		}
		after = got.PageInfo.EndCursor
	}
	perSlot := map[time.Time]int{}
	holders := map[string]bool{}
	for _, r := range runs {
		if r.Slot == nil || r.FinishedAt == nil || r.Error != "" {
			t.Fatalf("recorded run %+v", r)
		}
		perSlot[*r.Slot]++
		holders[r.Holder] = true
	}
	for slot, n := range perSlot {
		if n != 1 {
			t.Fatalf("slot %v has %d recorded runs", slot, n)
		}
	}
	if len(perSlot) < 4 {
		t.Fatalf("%d recorded runs, want at least 4", len(perSlot))
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.StartedAt.Before(*b.FinishedAt) && b.StartedAt.Before(*a.FinishedAt) {
				t.Fatalf("runs overlap: %+v and %+v", a, b)
			}
		}
	}
	// A slot both fired for may go unrun only when a run was under way
	// (holding the lease, until its "job finished" line) in its window: the firings wait for that run until the next
	// slot is due, which then stands for it (under load a one-second
	// decay can overrun its slot). A slot skipped while no run held the
	// lease is a lost slot.
	for _, slot := range unrun {
		next := slot.Add(time.Second) // the schedule fires every second
		busy := slices.ContainsFunc(runs, func(r *membrane.JobRun) bool {
			end := *r.FinishedAt
			if logged := finishedLogged[r.Slot.UTC().Format(time.RFC3339Nano)]; logged.After(end) {
				end = logged
			}
			return r.StartedAt.Before(next) && end.After(slot)
		})
		if !busy {
			t.Fatalf("slot %s, fired on both servers, ran on neither while no run was under way; runs %s; logs:\n%s",
				slot.Format(time.RFC3339Nano), runsText(runs), strings.Join(logs, "\n"))
		}
	}
	t.Logf("%d slots run by %d distinct servers; %d slots overrun by an earlier run", len(perSlot), len(holders), len(unrun))
}

// runsText lists recorded runs by slot, start and end, for a failure.
func runsText(runs []*membrane.JobRun) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "\n  slot %v holder %s %s..%v", r.Slot, r.Holder, r.StartedAt.Format(time.RFC3339Nano), r.FinishedAt)
	}
	return b.String()
}

// TestGracefulShutdown sends SIGTERM to the real server while a request is
// in flight (its handler is reading the body, which the test holds back):
// the server stops accepting connections, still answers that request, stops
// the jobs, closes the driver and exits 0, logging each step.
func TestGracefulShutdown(t *testing.T) {
	scope := neo4jtest.Scope(t)
	p := startProcess(t, append(jobsOff, "MEMBRANE_LOG_FORMAT=json", "MEMBRANE_JOBS_SCOPES="+scope)...)

	// Metrics and the request id are on by default.
	resp, err := http.Get(p.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") || len(resp.Header.Get("X-Request-Id")) != 36 {
		t.Fatalf("/metrics = %d, request id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}

	body, _ := json.Marshal(map[string]any{"query": `mutation Late { ingestEvent(input: {source: "s", eventKind: "k", ref: "r", scope: "` + scope + `"}) { type } }`})
	conn, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// With Expect: 100-continue the server says "100 Continue" when the
	// handler starts reading the body: from then on the request is in
	// flight, and stays so until the test sends the rest.
	head := "POST /graphql HTTP/1.1\r\nHost: membrane\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n" +
		"X-Request-Id: late-request\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	if cont, err := http.ReadResponse(br, nil); err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue: %v, %v", cont, err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.Log.Await(t, 0, "shutdown: listener closed", 90*time.Second)
	if c, err := net.Dial("tcp", p.Addr); err == nil {
		c.Close()
		t.Fatal("a new connection was accepted after shutdown began")
	}
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	final, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(final.Body)
	if final.StatusCode != 200 || !strings.Contains(string(answer), `"type":"EPISODIC"`) || final.Header.Get("X-Request-Id") != "late-request" {
		t.Fatalf("in-flight request answered %d %s", final.StatusCode, answer)
	}

	select {
	case <-p.Exited():
		if err := p.Err(); err != nil {
			t.Fatalf("server exited with %v after SIGTERM:\n%s", err, p.Log)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s of SIGTERM")
	}
	logs := p.Log.Lines()
	// Every step is logged, in order; the late request's access line
	// carries its id.
	steps := []string{"shutting down", "shutdown: listener closed", "shutdown: requests drained", "shutdown: neo4j driver closed", "shutdown complete"}
	next, jobsStopped, accessLogged := 0, false, false
	for _, line := range logs {
		var raw map[string]any
		if json.Unmarshal([]byte(line), &raw) != nil {
			continue
		}
		msg, _ := raw["msg"].(string)
		if next < len(steps) && strings.HasPrefix(msg, steps[next]) {
			next++
		}
		jobsStopped = jobsStopped || msg == "shutdown: jobs stopped"
		accessLogged = accessLogged || msg == "request" && raw["request_id"] == "late-request" && raw["operation"] == "Late" && raw["status"] == float64(200)
	}
	if next < len(steps) || !jobsStopped || !accessLogged {
		t.Fatalf("steps logged: %d of %v, jobs stopped %v, access line %v:\n%s", next, steps, jobsStopped, accessLogged, strings.Join(logs, "\n"))
	}
}
