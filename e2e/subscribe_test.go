package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
)

// subscription is one subscription held open over SSE against a server.
type subscription struct {
	t      *testing.T
	events chan gqltest.Response
}

// subscribe opens query over SSE; the stream ends with the test.
func (s *server) subscribe(t *testing.T, query string, vars map[string]any) *subscription {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	// No client timeout: the stream lives as long as the test.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("subscribe: status %d", resp.StatusCode)
	}
	sub := &subscription{t: t, events: make(chan gqltest.Response, 64)}
	go func() {
		defer close(sub.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		event := ""
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "next":
				// Undecodable data stays an empty response, which fails
				// the test that reads it.
				var r gqltest.Response
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r)
				select {
				case sub.events <- r:
				case <-t.Context().Done(): // the test stopped reading
					return
				}
			}
		}
	}()
	return sub
}

// next returns the next event's data decoded into out, failing after 30 s
// or when the stream has ended.
func (s *subscription) next(out any) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("the subscription ended")
		}
		if len(e.Errors) > 0 {
			s.t.Fatalf("subscription error: %+v", e.Errors)
		}
		if err := json.Unmarshal(e.Data, out); err != nil {
			s.t.Fatalf("decode event %s: %v", e.Data, err)
		}
	case <-time.After(30 * time.Second):
		s.t.Fatal("no event within 30 s")
	}
}

const recordChangedQ = `subscription($s: [String!], $after: String) {
  recordChanged(filter: {scopes: $s}, after: $after) { cursor recordId action } }`

type recordChanged struct {
	RecordChanged struct{ Cursor, RecordID, Action string }
}

// changeCursor returns the feed position to subscribe from.
func (s *server) changeCursor(t *testing.T) string {
	t.Helper()
	var out struct{ ChangeCursor string }
	s.do(t, `{ changeCursor }`, nil, &out)
	return out.ChangeCursor
}
