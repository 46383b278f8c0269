// Package config reads Membrane's configuration from defaults, an optional
// YAML file, the environment and command-line flags, in that order of
// increasing precedence, and validates it.
//
// Each setting is one field of Config, described by its struct tags: yaml
// (the key in the file), env (the environment variable, if any), flag and
// usage (the command-line flag, if any). Its default is in Default, and its
// row in README.md's configuration table (a test keeps the two in step).
package config

import (
	"time"

	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/feed"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

// Config is the server's configuration.
type Config struct {
	// Listen is the HTTP listen address.
	Listen string `yaml:"listen" env:"MEMBRANE_LISTEN" flag:"listen" usage:"HTTP listen address"`
	Neo4j  Neo4j  `yaml:"neo4j"`
	// DefaultSensitivity applies to writes that name none.
	DefaultSensitivity string `yaml:"default_sensitivity" env:"MEMBRANE_DEFAULT_SENSITIVITY"`
	// ReinforcementGain is the default salience gain of reinforce.
	ReinforcementGain float64 `yaml:"reinforcement_gain" env:"MEMBRANE_REINFORCEMENT_GAIN"`
	// LogFormat is "text" or "json"; unset, json in production mode and
	// text in dev.
	LogFormat string `yaml:"log_format" env:"MEMBRANE_LOG_FORMAT"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `yaml:"log_level" env:"MEMBRANE_LOG_LEVEL"`
	// MetricsEnabled serves Prometheus metrics at /metrics.
	MetricsEnabled bool `yaml:"metrics_enabled" env:"MEMBRANE_METRICS_ENABLED"`
	// MetricsListen, when set, serves /metrics on this address instead of
	// Listen (keeps metrics off a public listener).
	MetricsListen string `yaml:"metrics_listen" env:"MEMBRANE_METRICS_LISTEN" flag:"metrics-listen" usage:"serve /metrics on this address instead"`
	// OTelEndpoint is the OTLP/HTTP collector that traces are sent to
	// (http://collector:4318); empty leaves tracing off unless the
	// standard OTEL_EXPORTER_OTLP_ENDPOINT variables are set.
	OTelEndpoint string `yaml:"otel_endpoint" env:"MEMBRANE_OTEL_ENDPOINT"`
	// OTelFromEnv is set when a standard OTEL_EXPORTER_OTLP_*ENDPOINT
	// variable asks for tracing; the exporter reads it itself.
	OTelFromEnv bool `yaml:"-"`
	// ShutdownTimeout bounds the graceful shutdown: draining requests and
	// stopping jobs.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" env:"MEMBRANE_SHUTDOWN_TIMEOUT"`
	// StartupTimeout bounds how long the server waits for Neo4j at start.
	StartupTimeout time.Duration `yaml:"startup_timeout" env:"MEMBRANE_STARTUP_TIMEOUT"`
	// APIKeys bind hashed keys to principals; none configured means open
	// development mode. The environment's JSON list adds to the file's.
	APIKeys []APIKey `yaml:"api_keys" env:"MEMBRANE_API_KEYS"`
	// APIKeysFile is a YAML file holding a list of APIKey entries.
	APIKeysFile string `yaml:"api_keys_file" env:"MEMBRANE_API_KEYS_FILE"`
	// Encryption configures encryption at rest of sensitive records.
	Encryption Encryption `yaml:"encryption"`
	// Jobs configures the maintenance jobs.
	Jobs Jobs `yaml:"jobs"`
	// SelectionConfidenceThreshold is the selection confidence below which
	// retrieval reports needsMore (reference default 0.7).
	SelectionConfidenceThreshold float64 `yaml:"selection_confidence_threshold" env:"MEMBRANE_SELECTION_CONFIDENCE_THRESHOLD"`
	// Embedding configures optional vector search; off without an endpoint.
	Embedding Embedding `yaml:"embedding"`

	// Feed configures the change feed behind subscriptions.
	Feed Feed `yaml:"feed"`

	// Mode is "dev" or "production": production turns GraphiQL and
	// introspection off unless they are set.
	Mode string `yaml:"mode" env:"MEMBRANE_MODE" flag:"mode" usage:"dev or production"`
	// GraphiQL and Introspection, when set, override the mode's default.
	GraphiQL      *bool `yaml:"graphiql" env:"MEMBRANE_GRAPHIQL"`
	Introspection *bool `yaml:"introspection" env:"MEMBRANE_INTROSPECTION"`
	// Explorer, when set, overrides the mode's default for the lineage
	// explorer at /explorer/ (on in dev, off in production, as GraphiQL).
	Explorer *bool `yaml:"explorer" env:"MEMBRANE_EXPLORER"`
	// MigrateAtStart, when set, overrides the mode's default for migrating
	// a database of an older schema version at start (on in dev, so that
	// a development database follows the code; off in production, where
	// an upgrade is `membrane migrate`, run on purpose).
	MigrateAtStart *bool `yaml:"migrate_at_start" env:"MEMBRANE_MIGRATE_AT_START"`
	// RequestTimeout is the deadline of a GraphQL request; it also bounds
	// the Neo4j transactions the request runs (0: none).
	RequestTimeout time.Duration `yaml:"request_timeout" env:"MEMBRANE_REQUEST_TIMEOUT"`
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64 `yaml:"max_body_bytes" env:"MEMBRANE_MAX_BODY_BYTES"`
	// ReadTimeout bounds the reading of a request's body (0: none); it
	// does not cut long-lived SSE or WebSocket connections.
	ReadTimeout time.Duration `yaml:"read_timeout" env:"MEMBRANE_READ_TIMEOUT"`
	// IdleTimeout closes a kept-alive connection idle between requests
	// for this long (0: never).
	IdleTimeout time.Duration `yaml:"idle_timeout" env:"MEMBRANE_IDLE_TIMEOUT"`
	// TLSCertFile and TLSKeyFile, both set, serve HTTPS instead of HTTP.
	TLSCertFile string `yaml:"tls_cert_file" env:"MEMBRANE_TLS_CERT_FILE"`
	TLSKeyFile  string `yaml:"tls_key_file" env:"MEMBRANE_TLS_KEY_FILE"`
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

// Neo4j says how to reach the database.
type Neo4j struct {
	URI         string        `yaml:"uri" env:"NEO4J_URI" flag:"neo4j-uri" usage:"Neo4j URI, bolt:// or neo4j://"`
	User        string        `yaml:"user" env:"NEO4J_USER"`
	Password    string        `yaml:"password" env:"NEO4J_PASSWORD"`
	Database    string        `yaml:"database" env:"NEO4J_DATABASE" flag:"neo4j-database" usage:"Neo4j database"`
	MaxPoolSize int           `yaml:"max_pool_size"`
	TxTimeout   time.Duration `yaml:"tx_timeout"`
	// WarmUpReads is how many point reads (of ids that cannot exist) the
	// server runs before it listens, so that its first requests do not pay
	// for a cold Neo4j (neo4j.DB.Warm); 0 turns the warm-up off.
	WarmUpReads int `yaml:"warm_up_reads" env:"MEMBRANE_NEO4J_WARM_UP_READS"`
}

// CORS lists who may call the API from a browser on another origin.
type CORS struct {
	// AllowedOrigins are exact origins, or "*" (not with credentials).
	// None: no cross-origin access.
	AllowedOrigins []string `yaml:"allowed_origins" env:"MEMBRANE_CORS_ALLOWED_ORIGINS"`
	// AllowedMethods and AllowedHeaders default to what the API takes.
	AllowedMethods   []string      `yaml:"allowed_methods"`
	AllowedHeaders   []string      `yaml:"allowed_headers"`
	AllowCredentials bool          `yaml:"allow_credentials" env:"MEMBRANE_CORS_ALLOW_CREDENTIALS"`
	MaxAge           time.Duration `yaml:"max_age"`
}

// Limits bound each GraphQL operation (cost, depth, tokens) and the
// request rate of each principal. 0 turns a limit off.
type Limits struct {
	Complexity int `yaml:"complexity" env:"MEMBRANE_MAX_COMPLEXITY"`
	Depth      int `yaml:"depth" env:"MEMBRANE_MAX_DEPTH"`
	// RootFields bounds the root fields of one operation, aliases and
	// fragments included: each runs Neo4j transactions of its own.
	RootFields int `yaml:"root_fields" env:"MEMBRANE_MAX_ROOT_FIELDS"`
	// Tokens bounds a query document's tokens, for every role.
	Tokens int `yaml:"tokens" env:"MEMBRANE_MAX_TOKENS"`
	// Rate is requests per second per principal, with bursts of Burst.
	Rate  float64 `yaml:"rate" env:"MEMBRANE_RATE_LIMIT"`
	Burst int     `yaml:"burst" env:"MEMBRANE_RATE_BURST"`
	// RateLimitActors bounds how many principals' buckets are kept.
	RateLimitActors int `yaml:"rate_limit_actors"`
	// Concurrency bounds the costly operations (cost >= 5,000) each
	// principal has in progress on one server process; its further ones
	// wait their turn (0: no bound).
	Concurrency int `yaml:"concurrency" env:"MEMBRANE_MAX_CONCURRENCY"`
	// BodyBytesPerSecond is each principal's budget of request body bytes
	// a second, in bursts of up to one largest body (0: no budget).
	BodyBytesPerSecond int64 `yaml:"body_bytes_per_second" env:"MEMBRANE_BODY_BYTES_PER_SECOND"`
	// SubscriptionsPerPrincipal bounds the subscriptions one principal may
	// have open on one server process; Subscriptions bounds them all.
	SubscriptionsPerPrincipal int `yaml:"subscriptions_per_principal" env:"MEMBRANE_MAX_SUBSCRIPTIONS_PER_PRINCIPAL"`
	Subscriptions             int `yaml:"subscriptions" env:"MEMBRANE_MAX_SUBSCRIPTIONS"`
	// Roles override the limits above for a role (reader, writer, admin);
	// a role's entry replaces its defaults, and what it leaves out is the
	// general limit. Only the admin's entry has environment variables:
	// RoleLimits' env names after the prefix in envPrefix.
	Roles map[string]RoleLimits `yaml:"roles" mapkey:"role" envPrefix:"MEMBRANE_ADMIN_"`
}

// adminEnvRole is the role whose limits the environment sets (see
// Limits.Roles).
const adminEnvRole = membrane.RoleAdmin

// RoleLimits are one role's limits; nil fields are the general ones.
type RoleLimits struct {
	Complexity *int     `yaml:"complexity" env:"MAX_COMPLEXITY"`
	Depth      *int     `yaml:"depth" env:"MAX_DEPTH"`
	RootFields *int     `yaml:"root_fields" env:"MAX_ROOT_FIELDS"`
	Rate       *float64 `yaml:"rate" env:"RATE_LIMIT"`
	Burst      *int     `yaml:"burst" env:"RATE_BURST"`
	// Subscriptions overrides limits.subscriptions_per_principal.
	Subscriptions *int `yaml:"subscriptions_per_principal" env:"MAX_SUBSCRIPTIONS_PER_PRINCIPAL"`
}

// PersistedQueries configures persisted queries.
type PersistedQueries struct {
	// CacheSize is how many automatic persisted queries are kept (0: off).
	CacheSize int `yaml:"cache_size" env:"MEMBRANE_PERSISTED_QUERIES_CACHE_SIZE"`
	// AllowList is a JSON file mapping the hex SHA-256 of each allowed
	// operation's text to the text. Set, only those operations run.
	AllowList string `yaml:"allow_list" env:"MEMBRANE_PERSISTED_QUERIES_ALLOW_LIST"`
}

// Feed configures the change feed.
type Feed struct {
	// PollInterval is how often each server looks for changes made through
	// other servers (its own are seen at once).
	PollInterval time.Duration `yaml:"poll_interval" env:"MEMBRANE_FEED_POLL_INTERVAL"`
	// Batch is the most audit entries numbered or read per transaction.
	Batch int `yaml:"batch"`
}

// Encryption configures AES-256-GCM encryption at rest.
type Encryption struct {
	// From is the lowest sensitivity stored encrypted.
	From string `yaml:"from" env:"MEMBRANE_ENCRYPT_FROM"`
	// ActiveKey names the key new values are sealed with; the first key
	// when empty.
	ActiveKey string `yaml:"active_key"`
	// Keys are base64 32-byte keys by id. Keep retired keys listed until
	// every value sealed with them has been rewritten. The environment's
	// "KEY" or "id:KEY,id2:KEY2" replaces the file's keys and active key:
	// its first key is active.
	Keys []EncryptionKey `yaml:"keys" env:"MEMBRANE_ENCRYPTION_KEY"`
}

// EncryptionKey is one named key.
type EncryptionKey struct {
	ID  string `yaml:"id"`
	Key string `yaml:"key"`
}

// Embedding says which model embeds records and queries for vector
// search: the one inside Neo4j (the membrane.embed function that
// scripts/neo4j.sh and the compose file's image install), or an
// OpenAI-compatible endpoint.
type Embedding struct {
	// Provider is auto (the endpoint when one is set, else the model inside
	// Neo4j when Neo4j has it, else full text only, with a warning),
	// neo4j, endpoint or off.
	Provider string `yaml:"provider" env:"MEMBRANE_EMBEDDING_PROVIDER"`
	Endpoint string `yaml:"endpoint" env:"MEMBRANE_EMBEDDING_ENDPOINT"`
	Model    string `yaml:"model" env:"MEMBRANE_EMBEDDING_MODEL"`
	// APIKey is better given in MEMBRANE_EMBEDDING_API_KEY than in a file.
	APIKey     string `yaml:"api_key" env:"MEMBRANE_EMBEDDING_API_KEY"`
	Dimensions int    `yaml:"dimensions" env:"MEMBRANE_EMBEDDING_DIMENSIONS"`
	// SendDimensions asks the model for vectors of Dimensions numbers.
	SendDimensions bool          `yaml:"send_dimensions"`
	Timeout        time.Duration `yaml:"timeout"`
	// MaxSensitivity is the most sensitive level whose records are sent to
	// the embedding service and stored with a vector.
	MaxSensitivity string `yaml:"max_sensitivity" env:"MEMBRANE_EMBEDDING_MAX_SENSITIVITY"`
	// Background embeds new records after their writes, in batches, so
	// that writes wait neither for the model nor for the vector index;
	// false embeds them before each write and stores the vectors in its
	// transaction.
	Background bool `yaml:"background" env:"MEMBRANE_EMBEDDING_BACKGROUND"`
}

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
	// Decay, Prune, Consolidate and Embed are cron specs (five fields, an
	// optional leading seconds field, or @hourly, @every 10m…); "off"
	// disables a job's schedule (an admin can still run it with runJob).
	Decay       string `yaml:"decay" env:"MEMBRANE_JOBS_DECAY"`
	Prune       string `yaml:"prune" env:"MEMBRANE_JOBS_PRUNE"`
	Consolidate string `yaml:"consolidate" env:"MEMBRANE_JOBS_CONSOLIDATE"`
	// Embed gives vectors to the records that have none by the embedding
	// model (written before vector search was on, by revisions, or while
	// the model failed); it also runs once at start. Only with vector
	// search on.
	Embed string `yaml:"embed" env:"MEMBRANE_JOBS_EMBED"`
	// Timeout bounds one run.
	Timeout time.Duration `yaml:"timeout"`
	// LeaseTTL is how long a job's lease outlives a process that stopped
	// renewing it (crashed).
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// Scopes restricts every job to records in these scopes. Empty means
	// every record (production); tests and scope-partitioned deployments
	// set it.
	Scopes []string `yaml:"scopes" env:"MEMBRANE_JOBS_SCOPES"`
	// HistoryRetention is how long after its last change prune keeps a
	// record that is part of revision history; 0 keeps history forever.
	HistoryRetention time.Duration `yaml:"history_retention" env:"MEMBRANE_JOBS_HISTORY_RETENTION"`
	// IdempotencyRetention is how long prune keeps idempotency keys, and so
	// how long a retried request replays its first answer; 0 keeps them.
	IdempotencyRetention time.Duration `yaml:"idempotency_retention" env:"MEMBRANE_JOBS_IDEMPOTENCY_RETENTION"`
	// RunRetention is how long prune keeps the record of a finished job
	// run (jobRuns); 0 keeps them.
	RunRetention time.Duration `yaml:"run_retention" env:"MEMBRANE_JOBS_RUN_RETENTION"`
	// EpisodeWindow is the age window of episodic compression.
	EpisodeWindow time.Duration `yaml:"episode_window"`
}

// Default returns the built-in defaults: the one place each is stated.
// Where a package has defaults of its own (the HTTP handler's limits, the
// feed, retrieval), they are taken from it rather than repeated.
func Default() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		Neo4j: Neo4j{
			URI:         "bolt://127.0.0.1:7687",
			Database:    "neo4j",
			MaxPoolSize: 100,
			TxTimeout:   30 * time.Second,
			WarmUpReads: 3000,
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
			Embed:         "@every 10m",
			Timeout:       30 * time.Minute,
			LeaseTTL:      time.Minute,
			EpisodeWindow: membrane.DefaultConsolidationOptions().EpisodeWindow,
			// A week: far longer than any client retries, short enough
			// that the keys of busy writers do not pile up.
			IdempotencyRetention: 7 * 24 * time.Hour,
			RunRetention:         30 * 24 * time.Hour,
		},

		SelectionConfidenceThreshold: membrane.DefaultSelectionThreshold,
		Feed:                         Feed{PollInterval: feed.DefaultConfig.Interval, Batch: feed.DefaultConfig.Batch},
		Embedding: Embedding{Provider: EmbedAuto, Dimensions: 1536, Timeout: embedding.DefaultTimeout,
			MaxSensitivity: string(membrane.SensitivityMedium), Background: true},

		Mode:             ModeDev,
		RequestTimeout:   membranehttp.DefaultRequestTimeout,
		ReadTimeout:      membranehttp.DefaultReadTimeout,
		IdleTimeout:      120 * time.Second,
		MaxBodyBytes:     membranehttp.MaxBodyBytes,
		PersistedQueries: PersistedQueries{CacheSize: membranehttp.DefaultAPQCacheSize},
		Limits: Limits{
			Complexity: membranehttp.DefaultMaxComplexity, Depth: membranehttp.DefaultMaxDepth, RootFields: membranehttp.DefaultMaxRootFields,
			Tokens: membranehttp.DefaultParserTokenLimit, Rate: 50, Burst: 100, RateLimitActors: membranehttp.DefaultRateLimitActors,
			Concurrency:               membranehttp.DefaultPrincipalConcurrency,
			BodyBytesPerSecond:        membranehttp.DefaultBodyBytesPerSecond,
			SubscriptionsPerPrincipal: 100, Subscriptions: 10_000,
			Roles: map[string]RoleLimits{string(membrane.RoleAdmin): {
				Complexity: new(membranehttp.DefaultAdminMaxComplexity), Depth: new(membranehttp.DefaultAdminMaxDepth),
				RootFields: new(membranehttp.DefaultAdminMaxRootFields), Rate: new(500.0), Burst: new(1000), Subscriptions: new(1000)}},
		},
	}
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

// ExplorerOn reports whether the lineage explorer is served: as set, or in
// dev mode.
func (c Config) ExplorerOn() bool { return orMode(c.Explorer, c.Mode) }

// MigrateAtStartOn reports whether a start migrates a database of an
// older schema version: as set, or in dev mode.
func (c Config) MigrateAtStartOn() bool { return orMode(c.MigrateAtStart, c.Mode) }

// IntrospectionOn reports whether introspection is answered: as set, or in
// dev mode.
func (c Config) IntrospectionOn() bool { return orMode(c.Introspection, c.Mode) }

func orMode(v *bool, mode string) bool {
	if v != nil {
		return *v
	}
	return mode == ModeDev
}

// TracingEnabled reports whether traces are to be exported.
func (c Config) TracingEnabled() bool { return c.OTelEndpoint != "" || c.OTelFromEnv }

// Enabled reports whether vector search is configured.
func (e Embedding) Enabled() bool { return e.UsesEndpoint() }

// Embedding providers.
const (
	EmbedAuto     = "auto"
	EmbedNeo4j    = "neo4j"
	EmbedEndpoint = "endpoint"
	EmbedOff      = "off"
)

// UsesEndpoint reports whether records and queries are embedded by the
// configured endpoint.
func (e Embedding) UsesEndpoint() bool {
	return e.Provider == EmbedEndpoint || (e.Provider == EmbedAuto || e.Provider == "") && e.Endpoint != ""
}

// MayUseNeo4j reports whether the model inside Neo4j is to be used: asked
// for, or auto without an endpoint (when Neo4j has it).
func (e Embedding) MayUseNeo4j() bool {
	return e.Provider == EmbedNeo4j || (e.Provider == EmbedAuto || e.Provider == "") && e.Endpoint == ""
}
