package http

import (
	"net/http"
	"net/url"
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
	// AllowLoopback also allows http://localhost and http://127.0.0.1 on
	// any port: the origins of a dashboard under development. NewHandler
	// sets it in development mode (no API keys configured), where every
	// request is already the development admin.
	AllowLoopback bool
}

// loopbackOrigins are the WebSocket origin patterns (coder/websocket
// matches scheme://host with path.Match) of AllowLoopback.
var loopbackOrigins = []string{"http://localhost", "http://localhost:*", "http://127.0.0.1", "http://127.0.0.1:*"}

// isLoopbackOrigin reports whether origin is http://localhost or
// http://127.0.0.1, with or without a port, and nothing else: not a host
// that only starts with them (localhost.example.com), not https, no path.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	host, port := u.Hostname(), u.Port()
	if host != "localhost" && host != "127.0.0.1" || u.Host != host && u.Host != host+":"+port {
		return false
	}
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n <= 65535
}

// originPatterns are the WebSocket origin patterns of o: its origins, and
// the loopback ones when it allows them.
func (o CORSOptions) originPatterns() []string {
	if !o.AllowLoopback {
		return o.AllowedOrigins
	}
	return append(slices.Clip(o.AllowedOrigins), loopbackOrigins...)
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
	if len(o.AllowedOrigins) == 0 && !o.AllowLoopback {
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
		allowed := anyOrigin || slices.Contains(o.AllowedOrigins, origin) || o.AllowLoopback && isLoopbackOrigin(origin)
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
