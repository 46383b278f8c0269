package http

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// CORSOptions says which browser origins may call the API. No allowed
// origins (the default) means no cross-origin access: no CORS headers are
// sent and browsers keep other origins out.
type CORSOptions struct {
	// AllowedOrigins are exact origins ("https://app.example.com"), or "*"
	// for any origin (not with AllowCredentials).
	AllowedOrigins []string
	// AllowedMethods default to DefaultCORSMethods.
	AllowedMethods []string
	// AllowedHeaders default to DefaultCORSHeaders.
	AllowedHeaders []string
	// AllowCredentials lets browsers send cookies and HTTP auth.
	AllowCredentials bool
	// MaxAge is how long a browser may cache a preflight answer (0: not
	// said).
	MaxAge time.Duration
}

// Defaults of CORSOptions: the methods of the GraphQL transports and the
// headers a client sends (its key and the trust-narrowing headers).
var (
	DefaultCORSMethods = []string{http.MethodGet, http.MethodPost, http.MethodOptions}
	DefaultCORSHeaders = []string{"Authorization", "Content-Type", HeaderMaxSensitivity, HeaderScopes}
)

// cors answers preflight requests from allowed origins and marks responses
// to them readable by the browser. A preflight from another origin is 403
// FORBIDDEN; other requests from one pass through without CORS headers, so
// the browser hides the response.
func cors(o CORSOptions, next http.Handler) http.Handler {
	if len(o.AllowedOrigins) == 0 {
		return next
	}
	methods := strings.Join(orDefault(o.AllowedMethods, DefaultCORSMethods), ", ")
	headers := strings.Join(orDefault(o.AllowedHeaders, DefaultCORSHeaders), ", ")
	anyOrigin := slices.Contains(o.AllowedOrigins, "*") && !o.AllowCredentials
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		// The answer depends on the origin: caches must not share it.
		w.Header().Add("Vary", "Origin")
		allowed := anyOrigin || slices.Contains(o.AllowedOrigins, origin)
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !allowed {
			if preflight {
				writeError(w, http.StatusForbidden, membrane.EFORBIDDEN, "origin not allowed")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		// The origin is echoed rather than "*" so that credentials, when
		// allowed, are never paired with a wildcard.
		h.Set("Access-Control-Allow-Origin", origin)
		if o.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if !preflight {
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", headers)
		if o.MaxAge > 0 {
			h.Set("Access-Control-Max-Age", strconv.Itoa(int(o.MaxAge.Seconds())))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return def
	}
	return v
}
