package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"time"

	"github.com/membrane/membrane/internal/logging"
	"github.com/membrane/membrane/internal/membrane"
)

// FieldError is a setting that fails validation, named by its YAML key.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "config: " + e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr is a FieldError of field with a formatted message.
func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Validate checks every setting and returns all that fail, each a
// *FieldError (errors.As finds them in the joined error), or nil.
func (c Config) Validate() error {
	var errs []error
	add := func(e *FieldError) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	// The builders' errors are *FieldErrors too.
	if _, err := c.Keyring(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Sealer(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Policy(); err != nil {
		errs = append(errs, err)
	}
	add(c.checkObservability())
	errs = append(errs, c.jobsErrors()...)
	if f := c.Feed; f.PollInterval < time.Millisecond || f.PollInterval > time.Minute {
		add(fieldErr("feed.poll_interval", "must be 1ms to 1m, got %v", f.PollInterval))
	}
	if n := c.Neo4j.WarmUpReads; n < 0 || n > 100000 {
		add(fieldErr("neo4j.warm_up_reads", "must be 0 to 100000, got %d", n))
	}
	if b := c.Feed.Batch; b < 1 || b > 10000 {
		add(fieldErr("feed.batch", "must be 1 to 10000, got %d", b))
	}
	// 0 is not a threshold (retrieval takes it for "the default").
	if t := c.SelectionConfidenceThreshold; !(t > 0 && t <= 1) {
		add(fieldErr("selection_confidence_threshold", "must be in (0,1], got %v", t))
	}
	add(c.checkHTTP())
	add(c.checkLimits())
	add(c.checkEmbedding())
	return errors.Join(errs...)
}

// checkObservability checks logging, metrics, tracing and shutdown.
func (c Config) checkObservability() *FieldError {
	switch {
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fieldErr("log_format", "must be text or json, got %q", c.LogFormat)
	case c.MetricsListen != "" && !c.MetricsEnabled:
		return fieldErr("metrics_listen", "is set but metrics_enabled is false")
	case c.ShutdownTimeout <= 0:
		return fieldErr("shutdown_timeout", "must be > 0")
	}
	if _, err := logging.ParseLevel(c.LogLevel); err != nil {
		return &FieldError{Field: "log_level", Err: err}
	}
	if c.OTelEndpoint != "" {
		if u, err := url.Parse(c.OTelEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr("otel_endpoint", "must be an http(s) URL such as http://collector:4318, got %q", c.OTelEndpoint)
		}
	}
	return nil
}

// checkHTTP checks the settings of the HTTP server.
func (c Config) checkHTTP() *FieldError {
	if c.Mode != ModeDev && c.Mode != ModeProduction {
		return fieldErr("mode", "must be dev or production, got %q", c.Mode)
	}
	if e := firstNegative(
		notNegative{"request_timeout", int64(c.RequestTimeout), ""},
		notNegative{"read_timeout", int64(c.ReadTimeout), ""},
		notNegative{"idle_timeout", int64(c.IdleTimeout), ""},
	); e != nil {
		return e
	}
	switch {
	case c.MaxBodyBytes < 1:
		return fieldErr("max_body_bytes", "must be > 0")
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return fieldErr("tls_cert_file", "must be set with tls_key_file: both or neither")
	case c.CORS.AllowCredentials && slices.Contains(c.CORS.AllowedOrigins, "*"):
		return fieldErr("cors.allowed_origins", "cannot be \"*\" with cors.allow_credentials; list the origins")
	}
	return firstNegative(
		notNegative{"cors.max_age", int64(c.CORS.MaxAge), ""},
		notNegative{"persisted_queries.cache_size", int64(c.PersistedQueries.CacheSize), ""},
	)
}

// notNegative is a setting that must be >= 0: its key, its value and what
// 0 means, where it means something.
type notNegative struct {
	field string
	value int64
	zero  string
}

// firstNegative returns the error of the first of settings below 0, or nil.
func firstNegative(settings ...notNegative) *FieldError {
	for _, s := range settings {
		if s.value >= 0 {
			continue
		}
		if s.zero != "" {
			return fieldErr(s.field, "must be >= 0 (0: %s)", s.zero)
		}
		return fieldErr(s.field, "must be >= 0")
	}
	return nil
}

// checkLimits checks the limits, general and of each role.
func (c Config) checkLimits() *FieldError {
	l := c.Limits
	if e := firstNegative(
		notNegative{"limits.subscriptions", int64(l.Subscriptions), "no limit"},
		notNegative{"limits.tokens", int64(l.Tokens), ""},
		notNegative{"limits.rate_limit_actors", int64(l.RateLimitActors), ""},
		notNegative{"limits.concurrency", int64(l.Concurrency), "no bound"},
		notNegative{"limits.body_bytes_per_second", l.BodyBytesPerSecond, "no budget"},
	); e != nil {
		return e
	}
	for name := range l.Roles {
		if !membrane.Role(name).Valid() {
			return fieldErr("limits.roles", "unknown role %q", name)
		}
	}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		// The general limits are every role's but the ones it overrides:
		// an error names the general key unless the role's entry set it.
		field := "limits"
		if _, ok := l.Roles[string(role)]; ok {
			field = "limits.roles." + string(role)
		}
		r := c.LimitsFor(role)
		if r.Complexity < 0 || r.Depth < 0 || r.RootFields < 0 || r.Burst < 0 || !(r.Rate >= 0) || math.IsInf(r.Rate, 0) {
			return fieldErr(field, "limits of %s must be >= 0 (0: no limit)", role)
		}
		if r.Rate > 0 && r.Burst < 1 {
			return fieldErr(field, "limits of %s: a rate needs a burst of at least 1", role)
		}
		if c.SubscriptionsFor(role) < 0 {
			return fieldErr(field, "limits of %s: subscriptions_per_principal must be >= 0 (0: no limit)", role)
		}
	}
	return nil
}

// checkEmbedding checks vector search's settings, when it is on.
func (c Config) checkEmbedding() *FieldError {
	e := c.Embedding
	switch {
	case !slices.Contains([]string{"", EmbedAuto, EmbedNeo4j, EmbedEndpoint, EmbedOff}, e.Provider):
		return fieldErr("embedding.provider", "must be one of auto, neo4j, endpoint, off; got %q", e.Provider)
	case !membrane.Sensitivity(e.MaxSensitivity).Valid():
		return fieldErr("embedding.max_sensitivity", "must be one of public, low, medium, high, hyper")
	case e.Provider == EmbedEndpoint && e.Endpoint == "":
		return fieldErr("embedding.endpoint", "is required with embedding.provider endpoint")
	case !e.UsesEndpoint():
		return nil
	case e.Model == "":
		return fieldErr("embedding.model", "is required with embedding.endpoint")
	case e.Dimensions < 1 || e.Dimensions > 4096:
		return fieldErr("embedding.dimensions", "must be 1 to 4096, got %d", e.Dimensions)
	case e.Timeout <= 0:
		return fieldErr("embedding.timeout", "must be > 0")
	}
	return nil
}
