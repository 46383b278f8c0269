package http_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/membrane/membrane/graph"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

// TestCORSLoopbackInDevMode: with no API keys (development mode) a page
// on http://localhost or http://127.0.0.1, any port, may call the API and
// open a subscription socket; with keys only the configured origins may.
// Neither answer needs the database: preflights and sockets are refused or
// accepted before a resolver runs.
func TestCORSLoopbackInDevMode(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := func(keys *membrane.Keyring) string {
		opts := membranehttp.DefaultHandlerOptions()
		opts.CORS.AllowedOrigins = []string{"https://dash.example"}
		srv := httptest.NewServer(membranehttp.NewHandler(&graph.Resolver{}, panicPinger{}, keys, log, opts))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	k, err := membrane.NewAPIKey(membrane.HashKey("key-"+membrane.NewID()), membrane.Principal{Actor: "a", Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}})
	if err != nil {
		t.Fatal(err)
	}
	dev, prod := serve(membrane.NewKeyring(nil)), serve(membrane.NewKeyring([]membrane.APIKey{k}))
	for _, tc := range []struct {
		origin    string
		dev, prod bool
		// malformed: no browser sends it; the WebSocket library matches
		// only scheme and host (case-insensitively), so only CORS is
		// checked.
		malformed bool
	}{
		{"http://localhost:3000", true, false, false},
		{"http://localhost:5173", true, false, false},
		{"http://localhost", true, false, false},
		{"http://127.0.0.1:8080", true, false, false},
		{"http://LOCALHOST:3000", false, false, true}, // browsers send the host in lower case
		{"https://localhost:3000", false, false, false},
		{"http://localhost.evil.example:3000", false, false, false},
		{"http://127.0.0.1.nip.io", false, false, false},
		{"http://localhost:3000/path", false, false, true},
		{"http://user@localhost:3000", false, false, true},
		{"http://localhost:99999", false, false, true},
		{"http://[::1]:3000", false, false, false},
		{"null", false, false, true},
		{"https://dash.example", true, true, false}, // the configured list holds in both modes
		{"https://evil.example", false, false, false},
	} {
		for _, srv := range []struct {
			name, url string
			want      bool
		}{{"dev", dev, tc.dev}, {"production", prod, tc.prod}} {
			t.Run(srv.name+" "+tc.origin, func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodOptions, srv.url+"/graphql", nil)
				req.Header.Set("Origin", tc.origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.StatusCode == http.StatusNoContent && resp.Header.Get("Access-Control-Allow-Origin") == tc.origin
				if got != srv.want || !got && resp.StatusCode != http.StatusForbidden {
					t.Fatalf("preflight: %d %v, want allowed=%v", resp.StatusCode, resp.Header, srv.want)
				}
				if tc.malformed {
					return
				}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.url, "http")+"/graphql", &websocket.DialOptions{
					HTTPHeader: http.Header{"Origin": {tc.origin}}, Subprotocols: []string{"graphql-transport-ws"}})
				if err == nil {
					conn.CloseNow()
				}
				if (err == nil) != srv.want {
					t.Fatalf("WebSocket from %s: %v, want accepted=%v", tc.origin, err, srv.want)
				}
			})
		}
	}
}
