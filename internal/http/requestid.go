package http

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/membrane/membrane/internal/logging"
)

// HeaderRequestID carries a request's id, from the client (when sane) or
// made up here, back to the client.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLength bounds an incoming request id.
const maxRequestIDLength = 64

// requestID gives every request an id: the client's X-Request-Id when it
// is a sane one (a proxy's or the caller's own, so logs on both sides
// match), else a fresh UUID. It is echoed in the response header and put in
// the context, where the logger finds it for every line of the request.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderRequestID)
		if !validRequestID(id) {
			id = uuid.NewString()
		}
		w.Header().Set(HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(logging.WithRequestID(r.Context(), id)))
	})
}

// validRequestID accepts 1 to 64 characters of [A-Za-z0-9._-]: enough for
// UUIDs and the ids of common proxies, and nothing that could forge a log
// line or a header.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLength {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
