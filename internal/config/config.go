// Package config loads Membrane's configuration from defaults, an optional
// YAML file, the environment and command-line flags, in that order of
// increasing precedence.
package config

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/logging"
	"github.com/membrane/membrane/internal/membrane"
)

// Config is the server's configuration.
type Config struct {
	// Listen is the HTTP listen address.
	Listen string `yaml:"listen"`
	Neo4j  Neo4j  `yaml:"neo4j"`
	// DefaultSensitivity applies to writes that name none.
	DefaultSensitivity string `yaml:"default_sensitivity"`
	// ReinforcementGain is the default salience gain of reinforce.
	ReinforcementGain float64 `yaml:"reinforcement_gain"`
	// LogFormat is "text" or "json"; unset, json in production mode and
	// text in dev.
	LogFormat string `yaml:"log_format"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level"`
	// MetricsEnabled serves Prometheus metrics at /metrics.
	MetricsEnabled bool `yaml:"metrics_enabled"`
	// MetricsListen, when set, serves /metrics on this address instead of
	// Listen (keeps metrics off a public listener).
	MetricsListen string `yaml:"metrics_listen"`
	// OTelEndpoint is the OTLP/HTTP collector that traces are sent to
	// (http://collector:4318); empty leaves tracing off unless the
	// standard OTEL_EXPORTER_OTLP_ENDPOINT variables are set.
	OTelEndpoint string `yaml:"otel_endpoint"`
	// OTelFromEnv is set when a standard OTEL_EXPORTER_OTLP_*ENDPOINT
	// variable asks for tracing; the exporter reads it itself.
	OTelFromEnv bool `yaml:"-"`
	// ShutdownTimeout bounds the graceful shutdown: draining requests and
	// stopping jobs.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// StartupTimeout bounds how long the server waits for Neo4j at start.
	StartupTimeout time.Duration `yaml:"startup_timeout"`
	// APIKeys bind hashed keys to principals; none configured means open
	// development mode.
	APIKeys []APIKey `yaml:"api_keys"`
	// APIKeysFile is a YAML file holding a list of APIKey entries.
	APIKeysFile string `yaml:"api_keys_file"`
	// Encryption configures encryption at rest of sensitive records.
	Encryption Encryption `yaml:"encryption"`
	// Jobs configures the maintenance jobs.
	Jobs Jobs `yaml:"jobs"`
	// SelectionConfidenceThreshold is the selection confidence below which
	// retrieval reports needsMore (reference default 0.7).
	SelectionConfidenceThreshold float64 `yaml:"selection_confidence_threshold"`
	// Embedding configures optional vector search; off without an endpoint.
	Embedding Embedding `yaml:"embedding"`

	// Feed configures the change feed behind subscriptions.
	Feed Feed `yaml:"feed"`

	// Mode is "dev" or "production": production turns GraphiQL and
	// introspection off unless they are set.
	Mode string `yaml:"mode"`
	// GraphiQL and Introspection, when set, override the mode's default.
	GraphiQL      *bool `yaml:"graphiql"`
	Introspection *bool `yaml:"introspection"`
	// RequestTimeout is the deadline of a GraphQL request; it also bounds
	// the Neo4j transactions the request runs (0: none).
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadTimeout bounds the reading of a request's body (0: none); it
	// does not cut long-lived SSE or WebSocket connections.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// IdleTimeout closes a kept-alive connection idle between requests
	// for this long (0: never).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// TLSCertFile and TLSKeyFile, both set, serve HTTPS instead of HTTP.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// CORS lets browser applications of other origins call the API.
	CORS CORS `yaml:"cors"`
	// Limits bound each operation and each principal's request rate.
	Limits Limits `yaml:"limits"`
	// PersistedQueries configures automatic persisted queries and the
	// allow-list mode.
	PersistedQueries PersistedQueries `yaml:"persisted_queries"`
}

// Modes.
const (
	ModeDev        = "dev"
	ModeProduction = "production"
)

// CORS lists who may call the API from a browser on another origin.
type CORS struct {
	// AllowedOrigins are exact origins, or "*" (not with credentials).
	// None: no cross-origin access.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedMethods and AllowedHeaders default to what the API takes.
	AllowedMethods   []string      `yaml:"allowed_methods"`
	AllowedHeaders   []string      `yaml:"allowed_headers"`
	AllowCredentials bool          `yaml:"allow_credentials"`
	MaxAge           time.Duration `yaml:"max_age"`
}

// Limits bound each GraphQL operation (cost, depth, tokens) and the
// request rate of each principal. 0 turns a limit off.
type Limits struct {
	Complexity int `yaml:"complexity"`
	Depth      int `yaml:"depth"`
	// RootFields bounds the root fields of one operation, aliases and
	// fragments included: each runs Neo4j transactions of its own.
	RootFields int `yaml:"root_fields"`
	// Tokens bounds a query document's tokens, for every role.
	Tokens int `yaml:"tokens"`
	// Rate is requests per second per principal, with bursts of Burst.
	Rate  float64 `yaml:"rate"`
	Burst int     `yaml:"burst"`
	// RateLimitActors bounds how many principals' buckets are kept.
	RateLimitActors int `yaml:"rate_limit_actors"`
	// SubscriptionsPerPrincipal bounds the subscriptions one principal may
	// have open on one server process; Subscriptions bounds them all.
	SubscriptionsPerPrincipal int `yaml:"subscriptions_per_principal"`
	Subscriptions             int `yaml:"subscriptions"`
	// Roles override the limits above for a role (reader, writer, admin);
	// a role's entry replaces its defaults, and what it leaves out is the
	// general limit.
	Roles map[string]RoleLimits `yaml:"roles"`
}

// RoleLimits are one role's limits; nil fields are the general ones.
type RoleLimits struct {
	Complexity *int     `yaml:"complexity"`
	Depth      *int     `yaml:"depth"`
	RootFields *int     `yaml:"root_fields"`
	Rate       *float64 `yaml:"rate"`
	Burst      *int     `yaml:"burst"`
	// Subscriptions overrides limits.subscriptions_per_principal.
	Subscriptions *int `yaml:"subscriptions_per_principal"`
}

// PersistedQueries configures persisted queries.
type PersistedQueries struct {
	// CacheSize is how many automatic persisted queries are kept (0: off).
	CacheSize int `yaml:"cache_size"`
	// AllowList is a JSON file mapping the hex SHA-256 of each allowed
	// operation's text to the text. Set, only those operations run.
	AllowList string `yaml:"allow_list"`
}

// RoleLimit is the limits in force for one role.
type RoleLimit struct {
	Complexity, Depth, RootFields int
	Rate                          float64
	Burst                         int
}

// LimitsFor returns the limits of role: its own where it has them, the
// general ones elsewhere.
func (c Config) LimitsFor(role membrane.Role) RoleLimit {
	l := c.Limits
	out := RoleLimit{Complexity: l.Complexity, Depth: l.Depth, RootFields: l.RootFields, Rate: l.Rate, Burst: l.Burst}
	r, ok := l.Roles[string(role)]
	if !ok {
		return out
	}
	if r.Complexity != nil {
		out.Complexity = *r.Complexity
	}
	if r.Depth != nil {
		out.Depth = *r.Depth
	}
	if r.RootFields != nil {
		out.RootFields = *r.RootFields
	}
	if r.Rate != nil {
		out.Rate = *r.Rate
	}
	if r.Burst != nil {
		out.Burst = *r.Burst
	}
	return out
}

// SubscriptionsFor returns how many subscriptions a principal of role may
// have open on one server process (0: no limit): its role's own limit
// where it has one, the general one elsewhere.
func (c Config) SubscriptionsFor(role membrane.Role) int {
	if r, ok := c.Limits.Roles[string(role)]; ok && r.Subscriptions != nil {
		return *r.Subscriptions
	}
	return c.Limits.SubscriptionsPerPrincipal
}

// GraphiQLOn reports whether GraphiQL is served: as set, or in dev mode.
func (c Config) GraphiQLOn() bool { return orMode(c.GraphiQL, c.Mode) }

// IntrospectionOn reports whether introspection is answered: as set, or in
// dev mode.
func (c Config) IntrospectionOn() bool { return orMode(c.Introspection, c.Mode) }

func orMode(v *bool, mode string) bool {
	if v != nil {
		return *v
	}
	return mode == ModeDev
}

// Feed configures the change feed.
type Feed struct {
	// PollInterval is how often each server looks for changes made through
	// other servers (its own are seen at once).
	PollInterval time.Duration `yaml:"poll_interval"`
	// Batch is the most audit entries numbered or read per transaction.
	Batch int `yaml:"batch"`
}

// Encryption configures AES-256-GCM encryption at rest.
type Encryption struct {
	// From is the lowest sensitivity stored encrypted.
	From string `yaml:"from"`
	// ActiveKey names the key new values are sealed with; the first key
	// when empty.
	ActiveKey string `yaml:"active_key"`
	// Keys are base64 32-byte keys by id. Keep retired keys listed until
	// every value sealed with them has been rewritten.
	Keys []EncryptionKey `yaml:"keys"`
}

// EncryptionKey is one named key.
type EncryptionKey struct {
	ID  string `yaml:"id"`
	Key string `yaml:"key"`
}

// Embedding says how to reach an OpenAI-compatible embeddings endpoint.
type Embedding struct {
	Endpoint string `yaml:"endpoint"`
	Model    string `yaml:"model"`
	// APIKey is better given in MEMBRANE_EMBEDDING_API_KEY than in a file.
	APIKey     string `yaml:"api_key"`
	Dimensions int    `yaml:"dimensions"`
	// SendDimensions asks the model for vectors of Dimensions numbers.
	SendDimensions bool          `yaml:"send_dimensions"`
	Timeout        time.Duration `yaml:"timeout"`
	// MaxSensitivity is the most sensitive level whose records are sent to
	// the embedding service and stored with a vector.
	MaxSensitivity string `yaml:"max_sensitivity"`
}

// Enabled reports whether vector search is configured.
func (e Embedding) Enabled() bool { return e.Endpoint != "" }

// APIKey is one configured key: the SHA-256 of the secret (hex), never the
// secret itself, and the principal it authenticates as.
type APIKey struct {
	KeySHA256      string   `yaml:"key_sha256" json:"key_sha256"`
	Actor          string   `yaml:"actor" json:"actor"`
	Role           string   `yaml:"role" json:"role"`
	MaxSensitivity string   `yaml:"max_sensitivity" json:"max_sensitivity"`
	Scopes         []string `yaml:"scopes" json:"scopes"`
}

// Jobs configures the maintenance jobs.
type Jobs struct {
	// Decay, Prune and Consolidate are cron specs (five fields, an
	// optional leading seconds field, or @hourly, @every 10m…); "off"
	// disables a job's schedule (an admin can still run it with runJob).
	Decay       string `yaml:"decay"`
	Prune       string `yaml:"prune"`
	Consolidate string `yaml:"consolidate"`
	// Timeout bounds one run.
	Timeout time.Duration `yaml:"timeout"`
	// LeaseTTL is how long a job's lease outlives a process that stopped
	// renewing it (crashed).
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// Scopes restricts every job to records in these scopes. Empty means
	// every record (production); tests and scope-partitioned deployments
	// set it.
	Scopes []string `yaml:"scopes"`
	// HistoryRetention is how long after its last change prune keeps a
	// record that is part of revision history; 0 keeps history forever.
	HistoryRetention time.Duration `yaml:"history_retention"`
	// IdempotencyRetention is how long prune keeps idempotency keys, and so
	// how long a retried request replays its first answer; 0 keeps them.
	IdempotencyRetention time.Duration `yaml:"idempotency_retention"`
	// EpisodeWindow is the age window of episodic compression.
	EpisodeWindow time.Duration `yaml:"episode_window"`
}

// Neo4j says how to reach the database.
type Neo4j struct {
	URI         string        `yaml:"uri"`
	User        string        `yaml:"user"`
	Password    string        `yaml:"password"`
	Database    string        `yaml:"database"`
	MaxPoolSize int           `yaml:"max_pool_size"`
	TxTimeout   time.Duration `yaml:"tx_timeout"`
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		Neo4j: Neo4j{
			URI:         "bolt://127.0.0.1:7687",
			Database:    "neo4j",
			MaxPoolSize: 100,
			TxTimeout:   30 * time.Second,
		},
		DefaultSensitivity: string(membrane.SensitivityLow),
		Encryption:         Encryption{From: string(membrane.SensitivityHigh)},
		ReinforcementGain:  0.1,
		LogLevel:           "info",
		MetricsEnabled:     true,
		ShutdownTimeout:    20 * time.Second,
		StartupTimeout:     60 * time.Second,
		Jobs: Jobs{
			Decay:         "@hourly",
			Prune:         "@hourly",
			Consolidate:   "0 */6 * * *",
			Timeout:       30 * time.Minute,
			LeaseTTL:      time.Minute,
			EpisodeWindow: membrane.DefaultConsolidationOptions().EpisodeWindow,
			// A week: far longer than any client retries, short enough
			// that the keys of busy writers do not pile up.
			IdempotencyRetention: 7 * 24 * time.Hour,
		},

		SelectionConfidenceThreshold: membrane.DefaultSelectionThreshold,
		Feed:                         Feed{PollInterval: feed.DefaultConfig.Interval, Batch: feed.DefaultConfig.Batch},
		Embedding: Embedding{Dimensions: 1536, Timeout: 10 * time.Second,
			MaxSensitivity: string(membrane.SensitivityMedium)},

		Mode:             ModeDev,
		RequestTimeout:   30 * time.Second,
		ReadTimeout:      30 * time.Second,
		IdleTimeout:      120 * time.Second,
		MaxBodyBytes:     membrane.MaxPayloadBytes + 1<<20,
		PersistedQueries: PersistedQueries{CacheSize: 1000},
		Limits: Limits{Complexity: 50_000, Depth: 15, RootFields: 20, Tokens: 20_000, Rate: 50, Burst: 100, RateLimitActors: 10_000,
			SubscriptionsPerPrincipal: 100, Subscriptions: 10_000,
			Roles: map[string]RoleLimits{string(membrane.RoleAdmin): {
				Complexity: ptr(1_000_000), Depth: ptr(30), RootFields: ptr(100), Rate: ptr(500.0), Burst: ptr(1000), Subscriptions: ptr(1000)}}},
	}
}

func ptr[T any](v T) *T { return &v }

// Load reads configuration for a process started with args (without the
// program name) in an environment looked up by getenv.
func Load(args []string, getenv func(string) string) (Config, error) {
	c := Default()
	fs := flag.NewFlagSet("membrane", flag.ContinueOnError)
	path := fs.String("config", getenv("MEMBRANE_CONFIG"), "path of a YAML configuration file")
	listen := fs.String("listen", "", "HTTP listen address (env MEMBRANE_LISTEN)")
	metricsListen := fs.String("metrics-listen", "", "serve /metrics on this address instead (env MEMBRANE_METRICS_LISTEN)")
	uri := fs.String("neo4j-uri", "", "Neo4j URI, bolt:// or neo4j:// (env NEO4J_URI)")
	db := fs.String("neo4j-database", "", "Neo4j database (env NEO4J_DATABASE)")
	mode := fs.String("mode", "", "dev or production (env MEMBRANE_MODE)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *path != "" {
		b, err := os.ReadFile(*path)
		if err != nil {
			return c, fmt.Errorf("read config: %w", err)
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			return c, fmt.Errorf("parse config %s: %w", *path, err)
		}
	}
	envs := []struct {
		name string
		set  func(string) error
	}{
		{"MEMBRANE_LISTEN", func(v string) error { c.Listen = v; return nil }},
		{"NEO4J_URI", func(v string) error { c.Neo4j.URI = v; return nil }},
		{"NEO4J_USER", func(v string) error { c.Neo4j.User = v; return nil }},
		{"NEO4J_PASSWORD", func(v string) error { c.Neo4j.Password = v; return nil }},
		{"NEO4J_DATABASE", func(v string) error { c.Neo4j.Database = v; return nil }},
		{"MEMBRANE_DEFAULT_SENSITIVITY", func(v string) error { c.DefaultSensitivity = v; return nil }},
		{"MEMBRANE_LOG_FORMAT", func(v string) error { c.LogFormat = v; return nil }},
		{"MEMBRANE_LOG_LEVEL", func(v string) error { c.LogLevel = v; return nil }},
		{"MEMBRANE_METRICS_ENABLED", func(v string) (err error) {
			c.MetricsEnabled, err = strconv.ParseBool(v)
			return err
		}},
		{"MEMBRANE_METRICS_LISTEN", func(v string) error { c.MetricsListen = v; return nil }},
		{"MEMBRANE_OTEL_ENDPOINT", func(v string) error { c.OTelEndpoint = v; return nil }},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", func(string) error { c.OTelFromEnv = true; return nil }},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", func(string) error { c.OTelFromEnv = true; return nil }},
		{"MEMBRANE_SHUTDOWN_TIMEOUT", func(v string) (err error) {
			c.ShutdownTimeout, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_API_KEYS_FILE", func(v string) error { c.APIKeysFile = v; return nil }},
		{"MEMBRANE_ENCRYPT_FROM", func(v string) error { c.Encryption.From = v; return nil }},
		{"MEMBRANE_ENCRYPTION_KEY", func(v string) error {
			// "KEY" or "id:KEY,id2:KEY2"; the first is the active key.
			c.Encryption.Keys, c.Encryption.ActiveKey = nil, ""
			for _, part := range strings.Split(v, ",") {
				id, key, ok := strings.Cut(strings.TrimSpace(part), ":")
				if !ok {
					id, key = "default", id
				}
				c.Encryption.Keys = append(c.Encryption.Keys, EncryptionKey{ID: id, Key: key})
			}
			return nil
		}},
		{"MEMBRANE_API_KEYS", func(v string) error {
			var keys []APIKey
			if err := json.Unmarshal([]byte(v), &keys); err != nil {
				return fmt.Errorf("want a JSON list of {key_sha256, actor, role, max_sensitivity, scopes}: %w", err)
			}
			c.APIKeys = append(c.APIKeys, keys...)
			return nil
		}},
		{"MEMBRANE_REINFORCEMENT_GAIN", func(v string) (err error) {
			c.ReinforcementGain, err = strconv.ParseFloat(v, 64)
			return err
		}},
		{"MEMBRANE_JOBS_DECAY", func(v string) error { c.Jobs.Decay = v; return nil }},
		{"MEMBRANE_JOBS_PRUNE", func(v string) error { c.Jobs.Prune = v; return nil }},
		{"MEMBRANE_JOBS_CONSOLIDATE", func(v string) error { c.Jobs.Consolidate = v; return nil }},
		{"MEMBRANE_JOBS_SCOPES", func(v string) error { c.Jobs.Scopes = splitList(v); return nil }},
		{"MEMBRANE_JOBS_HISTORY_RETENTION", func(v string) (err error) {
			c.Jobs.HistoryRetention, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_JOBS_IDEMPOTENCY_RETENTION", func(v string) (err error) {
			c.Jobs.IdempotencyRetention, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_SELECTION_CONFIDENCE_THRESHOLD", func(v string) (err error) {
			c.SelectionConfidenceThreshold, err = strconv.ParseFloat(v, 64)
			return err
		}},
		{"MEMBRANE_EMBEDDING_ENDPOINT", func(v string) error { c.Embedding.Endpoint = v; return nil }},
		{"MEMBRANE_EMBEDDING_MODEL", func(v string) error { c.Embedding.Model = v; return nil }},
		{"MEMBRANE_EMBEDDING_API_KEY", func(v string) error { c.Embedding.APIKey = v; return nil }},
		{"MEMBRANE_EMBEDDING_DIMENSIONS", func(v string) (err error) {
			c.Embedding.Dimensions, err = strconv.Atoi(v)
			return err
		}},
		{"MEMBRANE_EMBEDDING_MAX_SENSITIVITY", func(v string) error { c.Embedding.MaxSensitivity = v; return nil }},
		{"MEMBRANE_FEED_POLL_INTERVAL", func(v string) (err error) {
			c.Feed.PollInterval, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_MODE", func(v string) error { c.Mode = v; return nil }},
		{"MEMBRANE_GRAPHIQL", func(v string) error { return setBool(&c.GraphiQL, v) }},
		{"MEMBRANE_INTROSPECTION", func(v string) error { return setBool(&c.Introspection, v) }},
		{"MEMBRANE_REQUEST_TIMEOUT", func(v string) (err error) {
			c.RequestTimeout, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_READ_TIMEOUT", func(v string) (err error) {
			c.ReadTimeout, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_IDLE_TIMEOUT", func(v string) (err error) {
			c.IdleTimeout, err = time.ParseDuration(v)
			return err
		}},
		{"MEMBRANE_MAX_BODY_BYTES", func(v string) (err error) {
			c.MaxBodyBytes, err = strconv.ParseInt(v, 10, 64)
			return err
		}},
		{"MEMBRANE_TLS_CERT_FILE", func(v string) error { c.TLSCertFile = v; return nil }},
		{"MEMBRANE_TLS_KEY_FILE", func(v string) error { c.TLSKeyFile = v; return nil }},
		{"MEMBRANE_CORS_ALLOWED_ORIGINS", func(v string) error { c.CORS.AllowedOrigins = splitList(v); return nil }},
		{"MEMBRANE_CORS_ALLOW_CREDENTIALS", func(v string) (err error) {
			c.CORS.AllowCredentials, err = strconv.ParseBool(v)
			return err
		}},
		{"MEMBRANE_MAX_COMPLEXITY", intVar(&c.Limits.Complexity)},
		{"MEMBRANE_MAX_DEPTH", intVar(&c.Limits.Depth)},
		{"MEMBRANE_MAX_ROOT_FIELDS", intVar(&c.Limits.RootFields)},
		{"MEMBRANE_MAX_TOKENS", intVar(&c.Limits.Tokens)},
		{"MEMBRANE_RATE_LIMIT", func(v string) (err error) {
			c.Limits.Rate, err = strconv.ParseFloat(v, 64)
			return err
		}},
		{"MEMBRANE_RATE_BURST", intVar(&c.Limits.Burst)},
		{"MEMBRANE_ADMIN_MAX_COMPLEXITY", adminLimit(&c, func(r *RoleLimits) any { return &r.Complexity })},
		{"MEMBRANE_ADMIN_MAX_DEPTH", adminLimit(&c, func(r *RoleLimits) any { return &r.Depth })},
		{"MEMBRANE_ADMIN_MAX_ROOT_FIELDS", adminLimit(&c, func(r *RoleLimits) any { return &r.RootFields })},
		{"MEMBRANE_ADMIN_RATE_LIMIT", adminLimit(&c, func(r *RoleLimits) any { return &r.Rate })},
		{"MEMBRANE_ADMIN_RATE_BURST", adminLimit(&c, func(r *RoleLimits) any { return &r.Burst })},
		{"MEMBRANE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL", intVar(&c.Limits.SubscriptionsPerPrincipal)},
		{"MEMBRANE_ADMIN_MAX_SUBSCRIPTIONS_PER_PRINCIPAL", adminLimit(&c, func(r *RoleLimits) any { return &r.Subscriptions })},
		{"MEMBRANE_MAX_SUBSCRIPTIONS", intVar(&c.Limits.Subscriptions)},
		{"MEMBRANE_PERSISTED_QUERIES_CACHE_SIZE", intVar(&c.PersistedQueries.CacheSize)},
		{"MEMBRANE_PERSISTED_QUERIES_ALLOW_LIST", func(v string) error { c.PersistedQueries.AllowList = v; return nil }},
	}
	for _, e := range envs {
		if v := getenv(e.name); v != "" {
			if err := e.set(v); err != nil {
				return c, fmt.Errorf("%s: %w", e.name, err)
			}
		}
	}
	if *listen != "" {
		c.Listen = *listen
	}
	if *metricsListen != "" {
		c.MetricsListen = *metricsListen
	}
	if *uri != "" {
		c.Neo4j.URI = *uri
	}
	if *db != "" {
		c.Neo4j.Database = *db
	}
	if *mode != "" {
		c.Mode = *mode
	}
	if c.APIKeysFile != "" {
		b, err := os.ReadFile(c.APIKeysFile)
		if err != nil {
			return c, fmt.Errorf("read api keys: %w", err)
		}
		var keys []APIKey
		if err := yaml.Unmarshal(b, &keys); err != nil {
			return c, fmt.Errorf("parse api keys %s: %w", c.APIKeysFile, err)
		}
		c.APIKeys = append(c.APIKeys, keys...)
	}
	if _, err := c.Keyring(); err != nil {
		return c, err
	}
	// Without an active key named, the first key is active (the one place
	// that says so: reseal reports it too).
	if c.Encryption.ActiveKey == "" && len(c.Encryption.Keys) > 0 {
		c.Encryption.ActiveKey = c.Encryption.Keys[0].ID
	}
	if _, err := c.Sealer(); err != nil {
		return c, err
	}
	if _, err := c.Policy(); err != nil {
		return c, err
	}
	if c.LogFormat == "" {
		c.LogFormat = "text"
		if c.Mode == ModeProduction {
			c.LogFormat = "json"
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("log_format must be text or json, got %q", c.LogFormat)
	}
	if _, err := logging.ParseLevel(c.LogLevel); err != nil {
		return c, fmt.Errorf("log_level: %w", err)
	}
	if c.OTelEndpoint != "" {
		if u, err := url.Parse(c.OTelEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("otel_endpoint must be an http(s) URL such as http://collector:4318, got %q", c.OTelEndpoint)
		}
	}
	if c.MetricsListen != "" && !c.MetricsEnabled {
		return c, fmt.Errorf("metrics_listen is set but metrics_enabled is false")
	}
	if c.ShutdownTimeout <= 0 {
		return c, fmt.Errorf("shutdown_timeout must be > 0")
	}
	if _, err := c.JobsConfig(); err != nil {
		return c, err
	}
	if f := c.Feed; f.PollInterval < time.Millisecond || f.PollInterval > time.Minute || f.Batch < 1 || f.Batch > 10000 {
		return c, fmt.Errorf("feed.poll_interval must be 1ms to 1m and feed.batch 1 to 10000, got %v and %d", f.PollInterval, f.Batch)
	}
	// 0 is not a threshold (retrieval takes it for "the default").
	if t := c.SelectionConfidenceThreshold; !(t > 0 && t <= 1) {
		return c, fmt.Errorf("selection_confidence_threshold must be in (0,1], got %v", t)
	}
	if err := c.checkHTTP(); err != nil {
		return c, err
	}
	if e := c.Embedding; e.Enabled() {
		switch {
		case e.Model == "":
			return c, fmt.Errorf("embedding.model is required with embedding.endpoint")
		case e.Dimensions < 1 || e.Dimensions > 4096:
			return c, fmt.Errorf("embedding.dimensions must be 1 to 4096, got %d", e.Dimensions)
		case e.Timeout <= 0:
			return c, fmt.Errorf("embedding.timeout must be > 0")
		case !membrane.Sensitivity(e.MaxSensitivity).Valid():
			return c, fmt.Errorf("embedding.max_sensitivity must be one of public, low, medium, high, hyper")
		}
	}
	return c, nil
}

// TracingEnabled reports whether traces are to be exported.
func (c Config) TracingEnabled() bool { return c.OTelEndpoint != "" || c.OTelFromEnv }

// checkHTTP checks the settings of the HTTP server and its limits.
func (c Config) checkHTTP() error {
	l := c.Limits
	switch {
	case c.Mode != ModeDev && c.Mode != ModeProduction:
		return fmt.Errorf("config: mode must be dev or production, got %q", c.Mode)
	case c.RequestTimeout < 0 || c.ReadTimeout < 0 || c.IdleTimeout < 0:
		return fmt.Errorf("config: request_timeout, read_timeout and idle_timeout must be >= 0")
	case c.MaxBodyBytes < 1:
		return fmt.Errorf("config: max_body_bytes must be > 0")
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return fmt.Errorf("config: tls_cert_file and tls_key_file go together")
	case c.CORS.AllowCredentials && slices.Contains(c.CORS.AllowedOrigins, "*"):
		return fmt.Errorf("config: cors.allowed_origins cannot be \"*\" with cors.allow_credentials; list the origins")
	case c.CORS.MaxAge < 0:
		return fmt.Errorf("config: cors.max_age must be >= 0")
	case l.Subscriptions < 0:
		return fmt.Errorf("config: limits.subscriptions must be >= 0 (0: no limit)")
	case l.Tokens < 0 || l.RateLimitActors < 0 || c.PersistedQueries.CacheSize < 0:
		return fmt.Errorf("config: limits.tokens, limits.rate_limit_actors and persisted_queries.cache_size must be >= 0")
	}
	roles := []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin}
	for name := range l.Roles {
		if !membrane.Role(name).Valid() {
			return fmt.Errorf("config: limits.roles: unknown role %q", name)
		}
	}
	for _, role := range roles {
		r := c.LimitsFor(role)
		if r.Complexity < 0 || r.Depth < 0 || r.RootFields < 0 || r.Burst < 0 || !(r.Rate >= 0) || math.IsInf(r.Rate, 0) {
			return fmt.Errorf("config: limits of %s must be >= 0 (0: no limit)", role)
		}
		if r.Rate > 0 && r.Burst < 1 {
			return fmt.Errorf("config: limits of %s: a rate needs a burst of at least 1", role)
		}
		if c.SubscriptionsFor(role) < 0 {
			return fmt.Errorf("config: limits of %s: subscriptions_per_principal must be >= 0 (0: no limit)", role)
		}
	}
	return nil
}

func setBool(dst **bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	*dst = &b
	return nil
}

func intVar(dst *int) func(string) error {
	return func(v string) (err error) {
		*dst, err = strconv.Atoi(v)
		return err
	}
}

// adminLimit returns the setter of one of the admin role's limits, the one
// field picks, from an environment value; the admin's other limits stay.
func adminLimit(c *Config, field func(*RoleLimits) any) func(string) error {
	return func(v string) error {
		roles := maps.Clone(c.Limits.Roles)
		if roles == nil {
			roles = map[string]RoleLimits{}
		}
		r := roles[string(membrane.RoleAdmin)]
		switch f := field(&r).(type) {
		case **int:
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			*f = &n
		case **float64:
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			*f = &x
		}
		roles[string(membrane.RoleAdmin)] = r
		c.Limits.Roles = roles
		return nil
	}
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// JobsConfig returns the job runner's configuration, checking every
// schedule and bound.
func (c Config) JobsConfig() (jobs.Config, error) {
	j := c.Jobs
	cfg := jobs.Config{
		Schedules: map[membrane.JobName]string{
			membrane.JobDecay: j.Decay, membrane.JobPrune: j.Prune, membrane.JobConsolidate: j.Consolidate,
		},
		Timeout: j.Timeout, LeaseTTL: j.LeaseTTL, HistoryRetention: j.HistoryRetention,
		IdempotencyRetention: j.IdempotencyRetention,
		Consolidation:        membrane.DefaultConsolidationOptions(),
	}
	cfg.Consolidation.EpisodeWindow = j.EpisodeWindow
	if len(j.Scopes) > 0 {
		cfg.Scopes = j.Scopes
	}
	for job, spec := range cfg.Schedules {
		if _, err := jobs.ParseSpec(spec); err != nil {
			return cfg, fmt.Errorf("config: jobs.%s: %w", job, err)
		}
	}
	switch {
	case j.Timeout <= 0:
		return cfg, fmt.Errorf("config: jobs.timeout must be > 0")
	case j.LeaseTTL < time.Second:
		return cfg, fmt.Errorf("config: jobs.lease_ttl must be >= 1s")
	case j.HistoryRetention < 0:
		return cfg, fmt.Errorf("config: jobs.history_retention must be >= 0")
	case j.IdempotencyRetention < 0:
		return cfg, fmt.Errorf("config: jobs.idempotency_retention must be >= 0")
	}
	if err := cfg.Consolidation.Validate(); err != nil {
		return cfg, fmt.Errorf("config: jobs: %w", err)
	}
	return cfg, nil
}

// Policy returns the ingestion policy the configuration asks for.
func (c Config) Policy() (membrane.Policy, error) {
	p := membrane.DefaultPolicy()
	p.DefaultSensitivity = membrane.Sensitivity(c.DefaultSensitivity)
	p.ReinforcementGain = c.ReinforcementGain
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("config: %w", err)
	}
	return p, nil
}

// Keyring returns the configured API keys; an empty keyring is dev mode.
func (c Config) Keyring() (*membrane.Keyring, error) {
	keys := make([]membrane.APIKey, 0, len(c.APIKeys))
	for _, k := range c.APIKeys {
		key, err := membrane.NewAPIKey(k.KeySHA256, membrane.Principal{
			Actor: k.Actor, Role: membrane.Role(k.Role), MaxSensitivity: membrane.Sensitivity(k.MaxSensitivity), Scopes: k.Scopes,
		})
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		keys = append(keys, key)
	}
	return membrane.NewKeyring(keys), nil
}

// Sealer returns the encryption at rest the configuration asks for. With no
// keys it still knows the threshold, and refuses records at or above it.
func (c Config) Sealer() (*membrane.Sealer, error) {
	keys := make([]membrane.SealKey, 0, len(c.Encryption.Keys))
	for _, k := range c.Encryption.Keys {
		b, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil {
			return nil, fmt.Errorf("config: encryption key %q is not base64: %w", k.ID, err)
		}
		keys = append(keys, membrane.SealKey{ID: k.ID, Key: b})
	}
	s, err := membrane.NewSealer(membrane.Sensitivity(c.Encryption.From), keys, c.Encryption.ActiveKey)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return s, nil
}
