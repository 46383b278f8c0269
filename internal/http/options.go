package http

import (
	"runtime"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
)

// HandlerOptions configures NewHandler beyond its services: what is served
// and the limits every request is held to. DefaultHandlerOptions is the
// development setup; internal/config builds the production one.
type HandlerOptions struct {
	// GraphiQL serves the GraphiQL page at /.
	GraphiQL bool
	// Explorer serves the lineage explorer at /explorer/ (web/explorer).
	Explorer bool
	// Introspection answers __schema and __type queries.
	Introspection bool
	// Limits bound one operation, by the role of the request's principal.
	// A role without an entry gets DefaultQueryLimits.
	Limits map[membrane.Role]graph.QueryLimits
	// ParserTokenLimit bounds the tokens of a query document, for every
	// role: it applies while parsing, before the principal's role matters
	// (0: no limit).
	ParserTokenLimit int
	// RateLimits bound the requests of each principal (by actor), by role;
	// a role without an entry, or with a zero rate, is not limited.
	RateLimits map[membrane.Role]RateLimit
	// RateLimitActors bounds how many principals' buckets are kept; the
	// ones idle longest are dropped first (0: DefaultRateLimitActors).
	RateLimitActors int
	// PrincipalConcurrency bounds the costly operations (CostlyOperation)
	// each principal (by actor) has in progress; its further ones wait (at
	// most ConcurrencyWait, then RATE_LIMITED). 0: no bound.
	PrincipalConcurrency int
	// ConcurrencyWait is how long a costly operation waits for one of its
	// principal's slots, and a large body for the server's (0:
	// DefaultConcurrencyWait).
	ConcurrencyWait time.Duration
	// RequestTimeout is the deadline of a GraphQL request, which bounds the
	// Neo4j transactions it runs (0: none).
	RequestTimeout time.Duration
	// BodyBytesPerSecond is each principal's budget of request body bytes
	// a second, in bursts of up to a whole largest body (0: no budget).
	BodyBytesPerSecond int64
	// MaxBodyBytes bounds a request body (0: MaxBodyBytes).
	MaxBodyBytes int64
	// ReadTimeout bounds the reading of a request's body, from when its
	// headers are read (0: none). A client trickling its body is answered
	// 408 and its connection closed.
	ReadTimeout time.Duration
	// APQCacheSize is how many automatic persisted queries are remembered
	// (0: automatic persisted queries off).
	APQCacheSize int
	// AllowList, when not nil, is allow-list mode: only these operations,
	// by the hex SHA-256 of their text, run.
	AllowList map[string]string
	// CORS answers cross-origin requests from the allowed origins.
	CORS CORSOptions
	// KeepAliveInterval is how often idle subscription streams, SSE and
	// WebSocket, get a keep-alive (0: DefaultKeepAliveInterval).
	KeepAliveInterval time.Duration
	// Now is the rate limiter's clock (nil: time.Now).
	Now func() time.Time
	// Version is the server's version, which MCP reports at initialize
	// ("": dev).
	Version string
}

// Defaults of the limits: the configuration's defaults too (internal/config).
const (
	DefaultMaxComplexity      = 50_000
	DefaultMaxDepth           = 15
	DefaultAdminMaxComplexity = 1_000_000
	DefaultAdminMaxDepth      = 30
	DefaultMaxRootFields      = 20
	DefaultAdminMaxRootFields = 100
	DefaultParserTokenLimit   = 20_000
	DefaultRateLimitActors    = 10_000
	DefaultAPQCacheSize       = 1000
	DefaultRequestTimeout     = 30 * time.Second
	DefaultReadTimeout        = 30 * time.Second
	DefaultConcurrencyWait    = 10 * time.Second
)

// DefaultPrincipalConcurrency is how many costly operations of one
// principal run at once: half the machine's cores, at least one, so that
// one principal's expensive operations leave cores to the others. On two
// cores, two at once took the polite client's p95 to 5.4x its idle one
// beside retrieveGraph at its bounds, one at once to 3.4x
// (docs/BENCHMARKS.md, "Fairness").
var DefaultPrincipalConcurrency = max(1, runtime.NumCPU()/2)

// DefaultQueryLimits are the limits of a role that has none configured.
var DefaultQueryLimits = graph.QueryLimits{Complexity: DefaultMaxComplexity, Depth: DefaultMaxDepth, RootFields: DefaultMaxRootFields}

// DefaultHandlerOptions is the development setup: GraphiQL, the explorer
// and introspection on, the default query limits (admins' higher), automatic
// persisted queries, no rate limit and no CORS origins (with no API keys,
// NewHandler allows loopback origins: CORSOptions.AllowLoopback).
func DefaultHandlerOptions() HandlerOptions {
	return HandlerOptions{
		GraphiQL:      true,
		Explorer:      true,
		Introspection: true,
		Limits: map[membrane.Role]graph.QueryLimits{
			membrane.RoleAdmin: {Complexity: DefaultAdminMaxComplexity, Depth: DefaultAdminMaxDepth, RootFields: DefaultAdminMaxRootFields},
		},
		ParserTokenLimit: DefaultParserTokenLimit,
		RequestTimeout:   DefaultRequestTimeout,
		MaxBodyBytes:     MaxBodyBytes,
		ReadTimeout:      DefaultReadTimeout,
		APQCacheSize:     DefaultAPQCacheSize,

		PrincipalConcurrency: DefaultPrincipalConcurrency,
		ConcurrencyWait:      DefaultConcurrencyWait,
		BodyBytesPerSecond:   DefaultBodyBytesPerSecond,
	}
}

// concurrencyWait is how long a request waits for a slot of its principal.
func (o HandlerOptions) concurrencyWait() time.Duration {
	if o.ConcurrencyWait <= 0 {
		return DefaultConcurrencyWait
	}
	return o.ConcurrencyWait
}

// limitsFor returns the query limits of role.
func (o HandlerOptions) limitsFor(role membrane.Role) graph.QueryLimits {
	if l, ok := o.Limits[role]; ok {
		return l
	}
	return DefaultQueryLimits
}
