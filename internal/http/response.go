package http

import (
	"encoding/json"
	"github.com/membrane/membrane/graph"
	"net/http"
)

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
