package http

import (
	"encoding/json"
	"github.com/membrane/membrane/graph"
	"net/http"
)

// errorWriter answers a request refused before its endpoint ran (401,
// 403, 413, 429...), with status, the domain error code and the message,
// in the endpoint's protocol: writeError for GraphQL and the downloads,
// mcp.WriteHTTPError (a JSON-RPC error) for MCP.
type errorWriter func(w http.ResponseWriter, status int, code, msg string)

// writeError answers with a GraphQL-shaped error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": graph.Code(code)}}}})
}

// writeJSON answers with v in JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
