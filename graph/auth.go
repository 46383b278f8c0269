package graph

import (
	"net/http"
	"strings"

	"github.com/membrane/membrane/internal/membrane"
)

// Request headers that narrow a request's trust below its principal's.
const (
	HeaderMaxSensitivity = "X-Membrane-Max-Sensitivity"
	HeaderScopes         = "X-Membrane-Scopes"
)

// authenticate resolves the request's principal from its bearer key and
// puts the request's trust in its context. A missing or wrong key is 401
// UNAUTHENTICATED; asking to widen trust is 403 FORBIDDEN. With no keys
// configured every request is the development principal.
func authenticate(keys *membrane.Keyring, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p membrane.Principal
		if keys.Open() {
			p = membrane.DevPrincipal()
		} else {
			key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="membrane"`)
				writeError(w, http.StatusUnauthorized, membrane.EUNAUTHORIZED, "missing API key: send Authorization: Bearer <key>")
				return
			}
			if p, ok = keys.Authenticate(strings.TrimSpace(key)); !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="membrane", error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, membrane.EUNAUTHORIZED, "invalid API key")
				return
			}
		}
		var maxSens *membrane.Sensitivity
		if v := r.Header.Get(HeaderMaxSensitivity); v != "" {
			s := membrane.Sensitivity(strings.ToLower(strings.TrimSpace(v)))
			maxSens = &s
		}
		var scopes []string
		if v, ok := r.Header[http.CanonicalHeaderKey(HeaderScopes)]; ok {
			scopes = []string{}
			for _, s := range strings.Split(strings.Join(v, ","), ",") {
				if s = strings.TrimSpace(s); s != "" {
					scopes = append(scopes, s)
				}
			}
		}
		t, err := membrane.NewTrust(p, maxSens, scopes)
		if err != nil {
			status := http.StatusForbidden
			if membrane.ErrorCode(err) == membrane.EINVALID {
				status = http.StatusBadRequest
			}
			writeError(w, status, membrane.ErrorCode(err), membrane.ErrorMessage(err))
			return
		}
		next.ServeHTTP(w, r.WithContext(membrane.NewContextWithTrust(r.Context(), t)))
	})
}

// writeError answers with a GraphQL-shaped error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": code}}}})
}
