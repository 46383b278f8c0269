// Package config loads Membrane's configuration from defaults, an optional
// YAML file, the environment and command-line flags, in that order of
// increasing precedence.
package config

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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
	// LogFormat is "text" or "json".
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
		LogFormat:          "text",
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
			EpisodeWindow: 24 * time.Hour,
		},

		SelectionConfidenceThreshold: membrane.DefaultSelectionThreshold,
		Feed:                         Feed{PollInterval: 100 * time.Millisecond, Batch: 1000},
		Embedding: Embedding{Dimensions: 1536, Timeout: 10 * time.Second,
			MaxSensitivity: string(membrane.SensitivityMedium)},
	}
}

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
			for i, part := range strings.Split(v, ",") {
				id, key, ok := strings.Cut(strings.TrimSpace(part), ":")
				if !ok {
					id, key = "default", id
				}
				if i == 0 {
					c.Encryption.ActiveKey = id
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
		{"MEMBRANE_JOBS_SCOPES", func(v string) error { c.Jobs.Scopes = strings.Split(v, ","); return nil }},
		{"MEMBRANE_JOBS_HISTORY_RETENTION", func(v string) (err error) {
			c.Jobs.HistoryRetention, err = time.ParseDuration(v)
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
	if _, err := c.Sealer(); err != nil {
		return c, err
	}
	if _, err := c.Policy(); err != nil {
		return c, err
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
	if t := c.SelectionConfidenceThreshold; !(t >= 0 && t <= 1) {
		return c, fmt.Errorf("selection_confidence_threshold must be in [0,1], got %v", t)
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

// JobsConfig returns the job runner's configuration, checking every
// schedule and bound.
func (c Config) JobsConfig() (jobs.Config, error) {
	j := c.Jobs
	cfg := jobs.Config{
		Schedules: map[membrane.JobName]string{
			membrane.JobDecay: j.Decay, membrane.JobPrune: j.Prune, membrane.JobConsolidate: j.Consolidate,
		},
		Timeout: j.Timeout, LeaseTTL: j.LeaseTTL, HistoryRetention: j.HistoryRetention,
		Consolidation: membrane.DefaultConsolidationOptions(),
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
	active := c.Encryption.ActiveKey
	if active == "" && len(keys) > 0 {
		active = keys[0].ID
	}
	s, err := membrane.NewSealer(membrane.Sensitivity(c.Encryption.From), keys, active)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return s, nil
}
