package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// FairnessConfig says how the fairness run goes: a polite client reads one
// record every Interval, first alone (idle), then beside Hostile clients
// of each attack in turn, each phase lasting Phase.
type FairnessConfig struct {
	Phase    time.Duration
	Interval time.Duration
	Hostile  int
	// Scope is where the run writes its records (a fresh one per run).
	Scope string
	// Only, when set, runs the attacks whose names it matches.
	Only *regexp.Regexp
}

// DefaultFairness is the run docs/BENCHMARKS.md reports.
var DefaultFairness = FairnessConfig{Phase: 20 * time.Second, Interval: 20 * time.Millisecond, Hostile: 4}

// Attack is what one hostile client sends over and over: one request
// (its status and error code are counted) per call of Send.
type Attack struct {
	Name string
	// Send sends one hostile request and returns how the server answered:
	// "200", "200 CODE" (a GraphQL error), "413", "transport"…
	Send func(ctx context.Context, h *Hostile) string
}

// Hostile is a hostile client: its own connections, the same API key
// unless another is given, and the run's fixture.
type Hostile struct {
	URL   string
	Key   string
	HTTP  *http.Client
	Scope string
	// Roots is a query that matches many of the fixture's records.
	Roots string
	// Cursor is the change feed's position before the fixture was written.
	Cursor string
	// Hold is how long a stream that reads nothing is held open.
	Hold time.Duration

	mu     sync.Mutex
	bodies map[string][]byte // see encoded
}

// FairnessPhase is what the polite client measured in one phase, and what
// the hostile clients sent and got.
type FairnessPhase struct {
	Name          string
	P50, P95, Max time.Duration
	Probes        int
	// ProbeErrors are the polite reads that failed (refused or broken).
	ProbeErrors int
	// FirstProbeError is the first of them.
	FirstProbeError error
	// Sent counts the hostile requests; Answers counts them by answer.
	Sent    int
	Answers map[string]int
}

// Attacks are the attacks of a fairness run, each one a way to take more
// of the server than a request's share that every limit lets through.
func Attacks() []Attack {
	aliases := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: __typename", i)
		}
		b.WriteString(" }")
		return b.String()
	}
	typename := aliases(6000)
	big := strings.Repeat("x", 9<<20)
	return []Attack{
		{Name: "6,000 __typename aliases", Send: func(ctx context.Context, h *Hostile) string {
			return h.raw(ctx, map[string]any{"query": typename})
		}},
		{Name: "retrieveGraph at its bounds", Send: func(ctx context.Context, h *Hostile) string {
			return h.raw(ctx, map[string]any{"query": `query($q: String, $s: [String!]) { retrieveGraph(input: {query: $q, scopes: $s,
				rootLimit: 100, nodeLimit: 1000, edgeLimit: 5000, maxHops: 5}) { nodes { hop record { id } } edges { sourceId targetId } truncated } }`,
				"variables": map[string]any{"q": h.Roots, "s": []string{h.Scope}}})
		}},
		{Name: "9 MiB request bodies", Send: func(ctx context.Context, h *Hostile) string {
			// Encoded once: encoding 9 MiB a request would spend the
			// attacker's machine, which here is the server's too.
			return h.post(ctx, h.encoded("9 MiB", map[string]any{"query": `mutation($s: String!, $c: JSON!) { captureMemory(input: {source: "bench", scope: $s, content: $c}) { primary { id } } }`,
				"variables": map[string]any{"s": h.Scope, "c": big}}))
		}},
		{Name: "slow bodies", Send: func(ctx context.Context, h *Hostile) string {
			return h.slow(ctx)
		}},
		{Name: "WebSocket floods", Send: func(ctx context.Context, h *Hostile) string {
			return h.wsFlood(ctx)
		}},
		{Name: "SSE streams not read", Send: func(ctx context.Context, h *Hostile) string {
			return h.sseHangup(ctx, h.Hold)
		}},
	}
}

// raw posts body as JSON, without persisted queries (an attacker sends the
// whole document every time), and returns the answer's status and code.
func (h *Hostile) raw(ctx context.Context, body map[string]any) string {
	b, err := json.Marshal(body)
	if err != nil {
		return "unsendable"
	}
	return h.post(ctx, b)
}

// encoded returns body as JSON, encoded once per name.
func (h *Hostile) encoded(name string, body map[string]any) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.bodies[name]; ok {
		return b
	}
	b, _ := json.Marshal(body)
	if h.bodies == nil {
		h.bodies = map[string][]byte{}
	}
	h.bodies[name] = b
	return b
}

// post posts b, a JSON body, and returns the answer's status and code.
func (h *Hostile) post(ctx context.Context, b []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(b))
	if err != nil {
		return "unsendable"
	}
	req.Header.Set("Content-Type", "application/json")
	if h.Key != "" {
		req.Header.Set("Authorization", "Bearer "+h.Key)
	}
	resp, err := h.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ""
		}
		return "transport"
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return answer(resp.StatusCode, raw)
}

// answer names a response by its status and its first error's code.
func answer(status int, raw []byte) string {
	var r struct {
		Errors []GraphQLError `json:"errors"`
	}
	if json.Unmarshal(raw, &r) == nil && len(r.Errors) > 0 {
		return fmt.Sprintf("%d %v", status, r.Errors[0].Extensions["code"])
	}
	return fmt.Sprint(status)
}

// slow opens a connection and sends a request whose body trickles in, a
// byte every 100 ms, until the server gives up on it (or the phase ends).
func (h *Hostile) slow(ctx context.Context) string {
	conn, hangUp, outcome := h.dialPost(ctx, &net.Dialer{}, "", 1000000, nil)
	if conn == nil {
		return outcome
	}
	defer hangUp()
	answered := make(chan string, 1)
	go func() {
		buf := make([]byte, 512)
		n, _ := conn.Read(buf)
		var status int
		fmt.Sscanf(string(buf[:n]), "HTTP/1.1 %d", &status)
		if status == 0 {
			answered <- "closed"
			return
		}
		answered <- fmt.Sprint(status)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-answered:
			return a
		case <-ctx.Done():
			return ""
		case <-tick.C:
			if _, err := conn.Write([]byte(" ")); err != nil {
				return <-answered
			}
		}
	}
}

// politeQ is the polite client's read: one record by id.
const politeQ = `query($id: ID!) { record(id: $id) { id type version confidence salience } }`

// Fairness measures how much each attack slows a polite client down: it
// seeds a fixture (records to read and a graph to walk), then runs the
// idle phase and one phase per attack, and returns them in that order.
// hostileKey is the attackers' API key (the polite client's when empty).
func Fairness(ctx context.Context, polite *Client, hostileKey string, cfg FairnessConfig, progress func(FairnessPhase)) ([]FairnessPhase, error) {
	var cur struct{ ChangeCursor string }
	if err := polite.Do(ctx, `{ changeCursor }`, nil, &cur); err != nil {
		return nil, fmt.Errorf("the change feed's cursor: %w", err)
	}
	ids, err := seedFairness(ctx, polite, cfg.Scope)
	if err != nil {
		return nil, fmt.Errorf("seeding the fixture: %w", err)
	}
	if hostileKey == "" {
		hostileKey = polite.Key
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = cfg.Hostile
	h := &Hostile{URL: polite.URL, Key: hostileKey, HTTP: &http.Client{Transport: t}, Scope: cfg.Scope, Roots: "postgres deploy kafka billing",
		Cursor: cur.ChangeCursor, Hold: cfg.Phase / 4}
	// Warm the polite path (persisted query, connections, plans).
	for i := range 50 {
		if err := polite.Do(ctx, politeQ, map[string]any{"id": ids[i%len(ids)]}, nil); err != nil {
			return nil, fmt.Errorf("the polite read: %w", err)
		}
	}
	var out []FairnessPhase
	run := func(name string, a *Attack) {
		p := phase(ctx, polite, h, ids, name, a, cfg)
		out = append(out, p)
		if progress != nil {
			progress(p)
		}
	}
	run("idle", nil)
	for _, a := range Attacks() {
		if cfg.Only != nil && !cfg.Only.MatchString(a.Name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		run(a.Name, &a)
	}
	return out, ctx.Err()
}

// phase runs the hostile clients of a (none when nil) for cfg.Phase while
// the polite client reads every cfg.Interval.
func phase(ctx context.Context, polite *Client, h *Hostile, ids []string, name string, a *Attack, cfg FairnessConfig) FairnessPhase {
	pctx, cancel := context.WithTimeout(ctx, cfg.Phase)
	defer cancel()
	p := FairnessPhase{Name: name, Answers: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	if a != nil {
		for range cfg.Hostile {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for pctx.Err() == nil {
					got := a.Send(pctx, h)
					if got == "" {
						continue // cut by the end of the phase
					}
					mu.Lock()
					p.Sent++
					p.Answers[got]++
					mu.Unlock()
				}
			}()
		}
	}
	var lat []time.Duration
	tick := time.NewTicker(cfg.Interval)
	for i := 0; ; i++ {
		select {
		case <-pctx.Done():
		case <-tick.C:
			start := time.Now()
			err := polite.Do(ctx, politeQ, map[string]any{"id": ids[i%len(ids)]}, nil)
			p.Probes++
			if err != nil {
				if p.ProbeErrors == 0 {
					p.FirstProbeError = err
				}
				p.ProbeErrors++
				continue
			}
			lat = append(lat, time.Since(start))
			continue
		}
		break
	}
	tick.Stop()
	wg.Wait()
	slices.Sort(lat)
	p.P50, p.P95 = Percentile(lat, 0.50), Percentile(lat, 0.95)
	if len(lat) > 0 {
		p.Max = lat[len(lat)-1]
	}
	return p
}

// seedFairness writes the run's fixture: 200 records to read, and 500
// captures naming services, projects and people of a small pool, so that
// the graph retrieveGraph walks has hubs.
func seedFairness(ctx context.Context, c *Client, scope string) ([]string, error) {
	in := make([]any, 200)
	for i := range in {
		in[i] = fact(scope, fmt.Sprint("polite-", i))
	}
	var out struct{ IngestBatch []idOut }
	if err := c.Do(ctx, batchQ, map[string]any{"in": in}, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out.IngestBatch))
	for i, r := range out.IngestBatch {
		ids[i] = r.ID
	}
	if len(ids) == 0 {
		return nil, errors.New("the batch wrote no record")
	}
	for i := range 500 {
		content := map[string]any{"text": corpusText(i), "service": fmt.Sprint("service-", i%17),
			"project": fmt.Sprint("project-", i%7), "person": fmt.Sprint("person-", i%5)}
		if err := c.Do(ctx, captureQ, map[string]any{"in": map[string]any{"source": "bench", "scope": scope, "content": content}}, nil); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// WriteFairness prints the phases as a Markdown table: the polite
// client's p50, p95 and its ratio to the idle p95, and what the hostile
// clients sent and got.
func WriteFairness(w io.Writer, phases []FairnessPhase) {
	fmt.Fprintln(w, "| phase | polite p50 | polite p95 | p95 / idle p95 | polite max | polite reads (failed) | hostile requests | answers |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var idle time.Duration
	for _, p := range phases {
		if p.Name == "idle" {
			idle = p.P95
		}
		ratio := "–"
		if idle > 0 {
			ratio = fmt.Sprintf("%.1fx", float64(p.P95)/float64(idle))
		}
		keys := slices.Sorted(maps.Keys(p.Answers))
		var ans []string
		for _, k := range keys {
			ans = append(ans, fmt.Sprintf("%s: %d", k, p.Answers[k]))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d (%d) | %d | %s |\n", p.Name, ms(p.P50), ms(p.P95), ratio, ms(p.Max),
			p.Probes, p.ProbeErrors, p.Sent, strings.Join(ans, ", "))
	}
}

// dialPost dials the server with d and writes a JSON POST to its URL: the
// head (with the key, the extra header lines and a Content-Length of
// length) and body, which may be shorter than length. It returns the
// connection and hangUp, which closes it, or, when it could not connect,
// the outcome: "unsendable", "transport", or "" when ctx ended. The
// connection is also closed when ctx ends, so that a read on it returns.
func (h *Hostile) dialPost(ctx context.Context, d *net.Dialer, header string, length int, body []byte) (conn net.Conn, hangUp func(), outcome string) {
	u, err := url.Parse(h.URL)
	if err != nil {
		return nil, nil, "unsendable"
	}
	conn, err = d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ""
		}
		return nil, nil, "transport"
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	auth := ""
	if h.Key != "" {
		auth = "Authorization: Bearer " + h.Key + "\r\n"
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s%sContent-Length: %d\r\n\r\n%s",
		u.RequestURI(), u.Host, header, auth, length, body)
	return conn, func() { stop(); conn.Close() }, ""
}
