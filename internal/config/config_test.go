package config_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// writeFile writes text to a file named name in a directory of the test's
// own and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestLoadPrecedence(t *testing.T) {
	yaml := "listen: 0.0.0.0:9000\nneo4j:\n  uri: bolt://file:7687\n  database: filedb\n  tx_timeout: 5s\ndefault_sensitivity: medium\n"
	file := writeFile(t, "membrane.yaml", yaml)
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantListen string
		wantURI    string
		wantDB     string
		wantSens   string
	}{
		{"defaults", nil, nil, "127.0.0.1:8080", "bolt://127.0.0.1:7687", "neo4j", "low"},
		{"file", []string{"-config", file}, nil, "0.0.0.0:9000", "bolt://file:7687", "filedb", "medium"},
		{"env over file", []string{"-config", file}, map[string]string{"NEO4J_URI": "neo4j://env:7687", "MEMBRANE_DEFAULT_SENSITIVITY": "high"}, "0.0.0.0:9000", "neo4j://env:7687", "filedb", "high"},
		{"flags over env", []string{"-neo4j-uri", "bolt://flag:1", "-listen", ":1"}, map[string]string{"NEO4J_URI": "neo4j://env:7687"}, ":1", "bolt://flag:1", "neo4j", "low"},
		{"config path from env", nil, map[string]string{"MEMBRANE_CONFIG": file}, "0.0.0.0:9000", "bolt://file:7687", "filedb", "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.Listen != tt.wantListen || c.Neo4j.URI != tt.wantURI || c.Neo4j.Database != tt.wantDB || c.DefaultSensitivity != tt.wantSens {
				t.Fatalf("got %+v", c)
			}
		})
	}
	c, _ := config.Load([]string{"-config", file}, env(nil))
	if c.Neo4j.TxTimeout != 5*time.Second {
		t.Fatalf("tx timeout = %v", c.Neo4j.TxTimeout)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	for name, e := range map[string]map[string]string{
		"sensitivity":             {"MEMBRANE_DEFAULT_SENSITIVITY": "secret"},
		"reinforcement gain":      {"MEMBRANE_REINFORCEMENT_GAIN": "2"},
		"gain not a number":       {"MEMBRANE_REINFORCEMENT_GAIN": "much"},
		"log format":              {"MEMBRANE_LOG_FORMAT": "xml"},
		"log level":               {"MEMBRANE_LOG_LEVEL": "loud"},
		"metrics flag":            {"MEMBRANE_METRICS_ENABLED": "maybe"},
		"metrics listen off":      {"MEMBRANE_METRICS_ENABLED": "false", "MEMBRANE_METRICS_LISTEN": ":9100"},
		"otel endpoint":           {"MEMBRANE_OTEL_ENDPOINT": "collector:4318"},
		"shutdown timeout":        {"MEMBRANE_SHUTDOWN_TIMEOUT": "0s"},
		"missing file":            {"MEMBRANE_CONFIG": "/does/not/exist.yaml"},
		"decay spec":              {"MEMBRANE_JOBS_DECAY": "hourly"},
		"empty prune spec":        {"MEMBRANE_JOBS_PRUNE": " "},
		"retention":               {"MEMBRANE_JOBS_HISTORY_RETENTION": "-1h"},
		"idempotency retention":   {"MEMBRANE_JOBS_IDEMPOTENCY_RETENTION": "-1h"},
		"threshold":               {"MEMBRANE_SELECTION_CONFIDENCE_THRESHOLD": "1.5"},
		"embedding model":         {"MEMBRANE_EMBEDDING_ENDPOINT": "http://e"},
		"embedding dims":          {"MEMBRANE_EMBEDDING_ENDPOINT": "http://e", "MEMBRANE_EMBEDDING_MODEL": "m", "MEMBRANE_EMBEDDING_DIMENSIONS": "0"},
		"embedding ceiling":       {"MEMBRANE_EMBEDDING_ENDPOINT": "http://e", "MEMBRANE_EMBEDDING_MODEL": "m", "MEMBRANE_EMBEDDING_MAX_SENSITIVITY": "top"},
		"mode":                    {"MEMBRANE_MODE": "staging"},
		"graphiql not a bool":     {"MEMBRANE_GRAPHIQL": "maybe"},
		"negative timeout":        {"MEMBRANE_REQUEST_TIMEOUT": "-1s"},
		"negative read timeout":   {"MEMBRANE_READ_TIMEOUT": "-1s"},
		"negative body budget":    {"MEMBRANE_BODY_BYTES_PER_SECOND": "-1"},
		"idle timeout not a time": {"MEMBRANE_IDLE_TIMEOUT": "long"},
		"zero body":               {"MEMBRANE_MAX_BODY_BYTES": "0"},
		"cert without key":        {"MEMBRANE_TLS_CERT_FILE": "c.pem"},
		"wildcard with cookies":   {"MEMBRANE_CORS_ALLOWED_ORIGINS": "*", "MEMBRANE_CORS_ALLOW_CREDENTIALS": "true"},
		"negative complexity":     {"MEMBRANE_MAX_COMPLEXITY": "-1"},
		"rate not a number":       {"MEMBRANE_RATE_LIMIT": "fast"},
		"negative rate":           {"MEMBRANE_RATE_LIMIT": "-1"},
		"rate without burst":      {"MEMBRANE_RATE_BURST": "0"},
		"negative admin depth":    {"MEMBRANE_ADMIN_MAX_DEPTH": "-3"},
		"negative root fields":    {"MEMBRANE_MAX_ROOT_FIELDS": "-1"},
		"admin root fields text":  {"MEMBRANE_ADMIN_MAX_ROOT_FIELDS": "many"},
		"admin rate not a number": {"MEMBRANE_ADMIN_RATE_LIMIT": "fast"},
		"negative cache":          {"MEMBRANE_PERSISTED_QUERIES_CACHE_SIZE": "-1"},
		"complexity not a number": {"MEMBRANE_MAX_COMPLEXITY": "lots"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Load(nil, env(e)); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestLoadAPIKeys(t *testing.T) {
	keys := "- key_sha256: " + strings.Repeat("ab", 32) + "\n  actor: agent-1\n  role: writer\n  max_sensitivity: medium\n  scopes: [alpha]\n"
	file := writeFile(t, "keys.yaml", keys)
	envKeys := `[{"key_sha256": "` + strings.Repeat("cd", 32) + `", "actor": "admin", "role": "admin", "max_sensitivity": "hyper", "scopes": ["*"]}]`
	c, err := config.Load(nil, env(map[string]string{"MEMBRANE_API_KEYS_FILE": file, "MEMBRANE_API_KEYS": envKeys}))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := c.Keyring()
	if err != nil || ring.Open() || len(c.APIKeys) != 2 {
		t.Fatalf("keys = %+v, %v", c.APIKeys, err)
	}
	if _, err := config.Load(nil, env(map[string]string{"MEMBRANE_API_KEYS": `[{"key_sha256": "zz", "actor": "a", "role": "writer", "max_sensitivity": "low"}]`})); err == nil {
		t.Fatal("a malformed key hash must be rejected")
	}
}

func TestLoadEncryption(t *testing.T) {
	k1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	k2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	c, err := config.Load(nil, env(map[string]string{"MEMBRANE_ENCRYPTION_KEY": "new:" + k2 + ",old:" + k1, "MEMBRANE_ENCRYPT_FROM": "medium"}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Sealer()
	if err != nil || !s.Required(membrane.SensitivityMedium) || s.Required(membrane.SensitivityLow) {
		t.Fatalf("sealer = %v, %v", s, err)
	}
	if sealed, err := s.Seal([]byte("x"), "c"); err != nil || !strings.HasPrefix(sealed, "mbx1:new:") {
		t.Fatalf("sealed with %q, %v", sealed, err)
	}
	if c, err = config.Load(nil, env(map[string]string{"MEMBRANE_ENCRYPTION_KEY": k1})); err != nil || c.Encryption.ActiveKey != "default" {
		t.Fatalf("single key: %+v, %v", c.Encryption, err)
	}
	for name, e := range map[string]map[string]string{
		"short key":       {"MEMBRANE_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString([]byte("short"))},
		"not base64":      {"MEMBRANE_ENCRYPTION_KEY": "k:!!!"},
		"bad sensitivity": {"MEMBRANE_ENCRYPT_FROM": "secret"},
	} {
		if _, err := config.Load(nil, env(e)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestJobsConfig(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.JobsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if j.Schedules["decay"] != "@hourly" || j.Schedules["prune"] != "@hourly" || j.Schedules["consolidate"] != "0 */6 * * *" ||
		j.Scopes != nil || j.Timeout != 30*time.Minute || j.Consolidation.EpisodeWindow != 24*time.Hour || j.HistoryRetention != 0 ||
		j.IdempotencyRetention != 7*24*time.Hour {
		t.Fatalf("default jobs config = %+v", j)
	}
	yaml := "jobs:\n  consolidate: \"off\"\n  scopes: [a, b]\n  history_retention: 720h\n  episode_window: 12h\n"
	file := writeFile(t, "membrane.yaml", yaml)
	c, err = config.Load([]string{"-config", file}, env(map[string]string{"MEMBRANE_JOBS_DECAY": "*/10 * * * * *",
		"MEMBRANE_JOBS_IDEMPOTENCY_RETENTION": "48h"}))
	if err != nil {
		t.Fatal(err)
	}
	j, _ = c.JobsConfig()
	if j.Schedules["consolidate"] != "off" || j.Schedules["decay"] != "*/10 * * * * *" || len(j.Scopes) != 2 ||
		j.HistoryRetention != 720*time.Hour || j.Consolidation.EpisodeWindow != 12*time.Hour || j.IdempotencyRetention != 48*time.Hour {
		t.Fatalf("jobs config from file and env = %+v", j)
	}
}

func TestLoadEmbedding(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil || c.Embedding.Enabled() || c.SelectionConfidenceThreshold != 0.7 {
		t.Fatalf("defaults %+v, %v", c, err)
	}
	yaml := "selection_confidence_threshold: 0.3\nembedding:\n  endpoint: http://file/v1/embeddings\n  model: file-model\n  dimensions: 768\n  timeout: 2s\n"
	file := writeFile(t, "membrane.yaml", yaml)
	c, err = config.Load([]string{"-config", file}, env(map[string]string{"MEMBRANE_EMBEDDING_API_KEY": "k", "MEMBRANE_EMBEDDING_MODEL": "env-model"}))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Embedding
	if !e.Enabled() || e.Endpoint != "http://file/v1/embeddings" || e.Model != "env-model" || e.APIKey != "k" || e.Dimensions != 768 ||
		e.Timeout != 2*time.Second || e.MaxSensitivity != "medium" || c.SelectionConfidenceThreshold != 0.3 {
		t.Fatalf("embedding %+v threshold %v", e, c.SelectionConfidenceThreshold)
	}
}

func TestLoadObservability(t *testing.T) {
	yaml := "metrics_listen: 127.0.0.1:9100\nlog_level: warn\notel_endpoint: http://file:4318\nshutdown_timeout: 5s\n"
	file := writeFile(t, "membrane.yaml", yaml)
	type want struct {
		metrics       bool
		metricsListen string
		level         string
		endpoint      string
		tracing       bool
		shutdown      time.Duration
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want want
	}{
		{"defaults", nil, nil, want{true, "", "info", "", false, 20 * time.Second}},
		{"file", []string{"-config", file}, nil, want{true, "127.0.0.1:9100", "warn", "http://file:4318", true, 5 * time.Second}},
		{"env over file", []string{"-config", file}, map[string]string{"MEMBRANE_METRICS_LISTEN": ":9200", "MEMBRANE_LOG_LEVEL": "debug",
			"MEMBRANE_OTEL_ENDPOINT": "https://env:4318", "MEMBRANE_SHUTDOWN_TIMEOUT": "1m"},
			want{true, ":9200", "debug", "https://env:4318", true, time.Minute}},
		{"flag over env", []string{"-metrics-listen", ":9300"}, map[string]string{"MEMBRANE_METRICS_LISTEN": ":9200"},
			want{true, ":9300", "info", "", false, 20 * time.Second}},
		{"metrics off", nil, map[string]string{"MEMBRANE_METRICS_ENABLED": "false"}, want{false, "", "info", "", false, 20 * time.Second}},
		{"standard OTLP variable", nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://std:4318"},
			want{true, "", "info", "", true, 20 * time.Second}},
		{"standard OTLP traces variable", nil, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://std:4318/v1/traces"},
			want{true, "", "info", "", true, 20 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			got := want{c.MetricsEnabled, c.MetricsListen, c.LogLevel, c.OTelEndpoint, c.TracingEnabled(), c.ShutdownTimeout}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLogFormatFollowsMode(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"dev default", nil, "text"},
		{"production default", map[string]string{"MEMBRANE_MODE": "production"}, "json"},
		{"production, text asked for", map[string]string{"MEMBRANE_MODE": "production", "MEMBRANE_LOG_FORMAT": "text"}, "text"},
		{"dev, json asked for", map[string]string{"MEMBRANE_LOG_FORMAT": "json"}, "json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(nil, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.LogFormat != tt.want {
				t.Fatalf("log format %q, want %q", c.LogFormat, tt.want)
			}
		})
	}
}

// TestActiveKeyAndScopeLists: keys listed in YAML without an active key
// make the first active, as MEMBRANE_ENCRYPTION_KEY does; comma lists drop
// blanks and spaces.
func TestActiveKeyAndScopeLists(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	yaml := "encryption:\n  keys:\n    - {id: k1, key: " + key + "}\n    - {id: k2, key: " + key + "}\n"
	file := writeFile(t, "membrane.yaml", yaml)
	c, err := config.Load([]string{"-config", file}, env(map[string]string{"MEMBRANE_JOBS_SCOPES": " a, b,,"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Encryption.ActiveKey != "k1" {
		t.Errorf("active key %q, want k1", c.Encryption.ActiveKey)
	}
	if !slices.Equal(c.Jobs.Scopes, []string{"a", "b"}) {
		t.Errorf("job scopes %q, want [a b]", c.Jobs.Scopes)
	}
}
