package http

import (
	"encoding/json"
	"github.com/membrane/membrane/graph"
	"net/http"
)

// errorWriter answers request r, refused before its endpoint ran (401,
// 403, 413, 429...), with status, the domain error code and the message,
// in the endpoint's protocol: graphQLRefusal for GraphQL and the
// downloads, mcp.WriteHTTPError (a JSON-RPC error answering r's id) for
// MCP.
type errorWriter func(w http.ResponseWriter, r *http.Request, status int, code, msg string)

// graphQLRefusal is writeError as an errorWriter.
func graphQLRefusal(w http.ResponseWriter, _ *http.Request, status int, code, msg string) {
	writeError(w, status, code, msg)
}

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
