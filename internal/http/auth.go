package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
)

// Request headers that narrow a request's trust below its principal's.
const (
	HeaderMaxSensitivity = "X-Membrane-Max-Sensitivity"
	HeaderScopes         = "X-Membrane-Scopes"
)

// credentials are what a request presents: its bearer key and the
// narrowing it asks for. HTTP requests carry them in headers; WebSocket
// clients, which browsers do not let set headers, in the connection_init
// payload under the same names.
type credentials struct {
	authorization  string
	maxSensitivity string
	// scopes is nil when no narrowing by scope was asked for.
	scopes []string
}

// authError is a refused authentication: the HTTP status and the membrane
// error to answer with.
type authError struct {
	status int
	err    *membrane.Error
}

// trustOf resolves credentials to the request's trust. A missing or wrong
// key is 401 UNAUTHENTICATED; asking to widen trust is 403 FORBIDDEN. With
// no keys configured every request is the development principal.
func trustOf(keys *membrane.Keyring, c credentials) (membrane.Trust, *authError) {
	var p membrane.Principal
	if keys.Open() {
		p = membrane.DevPrincipal()
	} else {
		key, ok := bearerKey(c.authorization)
		if !ok {
			return membrane.Trust{}, &authError{http.StatusUnauthorized,
				membrane.Errorf(membrane.EUNAUTHORIZED, "missing API key: send Authorization: Bearer <key>")}
		}
		if p, ok = keys.Authenticate(key); !ok {
			return membrane.Trust{}, &authError{http.StatusUnauthorized, membrane.Errorf(membrane.EUNAUTHORIZED, "invalid API key")}
		}
	}
	var maxSens *membrane.Sensitivity
	if v := c.maxSensitivity; v != "" {
		s := membrane.Sensitivity(strings.ToLower(strings.TrimSpace(v)))
		maxSens = &s
	}
	t, err := membrane.NewTrust(p, maxSens, c.scopes)
	if err != nil {
		status := http.StatusForbidden
		if membrane.ErrorCode(err) == membrane.EINVALID {
			status = http.StatusBadRequest
		}
		return t, &authError{status, &membrane.Error{Code: membrane.ErrorCode(err), Message: membrane.ErrorMessage(err)}}
	}
	return t, nil
}

// bearerKey returns the key of an Authorization value of the Bearer scheme.
// Clients spell the scheme in any case (RFC 7235 §2.1 makes it
// case-insensitive) and may put more than one space before the key.
func bearerKey(authorization string) (string, bool) {
	scheme, key, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(key), true
}

// splitScopes reads a comma-separated scope list.
func splitScopes(vs ...string) []string {
	scopes := []string{}
	for _, s := range strings.Split(strings.Join(vs, ","), ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopes = append(scopes, s)
		}
	}
	return scopes
}

type deferredAuthKey struct{}

// authenticate puts the request's trust, from its headers, in its context,
// or answers 401/403 with writeErr. A WebSocket upgrade without an
// Authorization header is let through: its client authenticates in
// connection_init (authenticateInit), before any operation runs.
func authenticate(keys *membrane.Keyring, writeErr errorWriter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebsocketUpgrade(r) && r.Header.Get("Authorization") == "" && !keys.Open() {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), deferredAuthKey{}, true)))
			return
		}
		c := credentials{authorization: r.Header.Get("Authorization"), maxSensitivity: r.Header.Get(HeaderMaxSensitivity)}
		if v, ok := r.Header[http.CanonicalHeaderKey(HeaderScopes)]; ok {
			c.scopes = splitScopes(v...)
		}
		t, aerr := trustOf(keys, c)
		if aerr != nil {
			if aerr.status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="membrane"`)
			}
			writeErr(w, r, aerr.status, aerr.err.Code, aerr.err.Message)
			return
		}
		next.ServeHTTP(w, r.WithContext(membrane.NewContextWithTrust(r.Context(), t)))
	})
}

// WebSocket close codes for a refused connection_init (graphql-transport-ws
// uses 4403 for a forbidden connection; 4401 tells a missing or bad key
// apart).
const (
	closeUnauthorized = 4401
	closeForbidden    = 4403
	closeRateLimited  = 4429
)

// authenticateInit authenticates a WebSocket connection whose upgrade
// request carried no key, from its connection_init payload: Authorization,
// X-Membrane-Max-Sensitivity and X-Membrane-Scopes, as the headers; and
// charges it to its principal's rate limit (closing it with 4429 when over).
func authenticateInit(keys *membrane.Keyring, limits *principalLimits) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if deferred, _ := ctx.Value(deferredAuthKey{}).(bool); !deferred {
			return ctx, nil, nil // authenticated from the upgrade request's headers
		}
		c := credentials{authorization: p.Authorization(), maxSensitivity: p.GetString(HeaderMaxSensitivity)}
		if v, ok := p[HeaderScopes]; ok {
			s, _ := v.(string)
			c.scopes = splitScopes(s)
		}
		t, aerr := trustOf(keys, c)
		if aerr != nil {
			code := closeForbidden
			if aerr.status == http.StatusUnauthorized {
				code = closeUnauthorized
			}
			return transport.WithWebsocketCloseCode(ctx, code), nil, errors.New(graph.Code(aerr.err.Code) + ": " + aerr.err.Message)
		}
		// The socket is charged here, once its principal is known, as an
		// HTTP request is when it arrives.
		if ok, wait := limits.allow(t.Principal); !ok {
			return transport.WithWebsocketCloseCode(ctx, closeRateLimited), nil,
				fmt.Errorf("%s: too many requests: retry after %d s", graph.Code(membrane.ERATELIMITED), wait)
		}
		return membrane.NewContextWithTrust(ctx, t), nil, nil
	}
}

func isWebsocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
