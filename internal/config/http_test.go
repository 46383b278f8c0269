package config_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
)

func TestLoadHTTPAndLimits(t *testing.T) {
	yaml := `mode: production
introspection: true
request_timeout: 5s
read_timeout: 7s
idle_timeout: 0s
max_body_bytes: 2048
cors:
  allowed_origins: [https://app.example]
  allow_credentials: true
limits:
  complexity: 1000
  root_fields: 5
  rate: 5
  burst: 10
  roles:
    reader:
      complexity: 200
      root_fields: 3
      rate: 1
persisted_queries:
  allow_list: /etc/membrane/ops.json
`
	file := writeFile(t, "membrane.yaml", yaml)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		// want checks the loaded configuration.
		want func(t *testing.T, c config.Config)
	}{
		{"dev defaults", nil, nil, func(t *testing.T, c config.Config) {
			if c.Mode != "dev" || !c.GraphiQLOn() || !c.ExplorerOn() || !c.IntrospectionOn() || !c.MigrateAtStartOn() || c.RequestTimeout != 30*time.Second ||
				c.ReadTimeout != 30*time.Second || c.IdleTimeout != 2*time.Minute ||
				c.MaxBodyBytes != membrane.MaxPayloadBytes+1<<20 || c.PersistedQueries.CacheSize != 1000 || c.Limits.Tokens != 20000 {
				t.Fatalf("%+v", c)
			}
			if got := c.LimitsFor(membrane.RoleWriter); got != (config.RoleLimit{Complexity: 50000, Depth: 15, RootFields: 20, Rate: 50, Burst: 100}) {
				t.Fatalf("writer %+v", got)
			}
			if got := c.LimitsFor(membrane.RoleAdmin); got != (config.RoleLimit{Complexity: 1000000, Depth: 30, RootFields: 100, Rate: 500, Burst: 1000}) {
				t.Fatalf("admin %+v", got)
			}
		}},
		{"production turns GraphiQL, the explorer and introspection off", nil, map[string]string{"MEMBRANE_MODE": "production"}, func(t *testing.T, c config.Config) {
			if c.GraphiQLOn() || c.ExplorerOn() || c.IntrospectionOn() || c.MigrateAtStartOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"each can be turned back on", []string{"-mode", "production"}, map[string]string{"MEMBRANE_GRAPHIQL": "true"}, func(t *testing.T, c config.Config) {
			if !c.GraphiQLOn() || c.IntrospectionOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"production with the explorer on", []string{"-mode", "production"}, map[string]string{"MEMBRANE_EXPLORER": "true"}, func(t *testing.T, c config.Config) {
			if !c.ExplorerOn() || c.GraphiQLOn() || c.IntrospectionOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"dev with the explorer off", nil, map[string]string{"MEMBRANE_EXPLORER": "false"}, func(t *testing.T, c config.Config) {
			if c.ExplorerOn() || !c.GraphiQLOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"production migrating at start", []string{"-mode", "production"}, map[string]string{"MEMBRANE_MIGRATE_AT_START": "true"}, func(t *testing.T, c config.Config) {
			if !c.MigrateAtStartOn() || c.GraphiQLOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"dev not migrating at start", nil, map[string]string{"MEMBRANE_MIGRATE_AT_START": "false"}, func(t *testing.T, c config.Config) {
			if c.MigrateAtStartOn() || !c.GraphiQLOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"dev with introspection off", nil, map[string]string{"MEMBRANE_INTROSPECTION": "false"}, func(t *testing.T, c config.Config) {
			if !c.GraphiQLOn() || c.IntrospectionOn() {
				t.Fatalf("%+v", c)
			}
		}},
		{"file", []string{"-config", file}, nil, func(t *testing.T, c config.Config) {
			if c.GraphiQLOn() || !c.IntrospectionOn() || c.RequestTimeout != 5*time.Second || c.MaxBodyBytes != 2048 ||
				c.ReadTimeout != 7*time.Second || c.IdleTimeout != 0 ||
				!c.CORS.AllowCredentials || len(c.CORS.AllowedOrigins) != 1 || c.PersistedQueries.AllowList != "/etc/membrane/ops.json" {
				t.Fatalf("%+v", c)
			}
			if got := c.LimitsFor(membrane.RoleReader); got != (config.RoleLimit{Complexity: 200, Depth: 15, RootFields: 3, Rate: 1, Burst: 10}) {
				t.Fatalf("reader %+v", got)
			}
			if got := c.LimitsFor(membrane.RoleWriter); got != (config.RoleLimit{Complexity: 1000, Depth: 15, RootFields: 5, Rate: 5, Burst: 10}) {
				t.Fatalf("writer %+v", got)
			}
			if got := c.LimitsFor(membrane.RoleAdmin); got.Complexity != 1000000 {
				t.Fatalf("admin %+v: the file did not name admin, its defaults stay", got)
			}
		}},
		{"env", nil, map[string]string{"MEMBRANE_MAX_COMPLEXITY": "10", "MEMBRANE_MAX_DEPTH": "4", "MEMBRANE_MAX_TOKENS": "99", "MEMBRANE_MAX_ROOT_FIELDS": "7", "MEMBRANE_ADMIN_MAX_ROOT_FIELDS": "9",
			"MEMBRANE_RATE_LIMIT": "2.5", "MEMBRANE_RATE_BURST": "3", "MEMBRANE_ADMIN_MAX_COMPLEXITY": "20", "MEMBRANE_ADMIN_RATE_LIMIT": "0",
			"MEMBRANE_REQUEST_TIMEOUT": "1m", "MEMBRANE_READ_TIMEOUT": "3s", "MEMBRANE_IDLE_TIMEOUT": "5m", "MEMBRANE_MAX_BODY_BYTES": "100", "MEMBRANE_CORS_ALLOWED_ORIGINS": "https://a, https://b",
			"MEMBRANE_TLS_CERT_FILE": "c.pem", "MEMBRANE_TLS_KEY_FILE": "k.pem", "MEMBRANE_PERSISTED_QUERIES_CACHE_SIZE": "0",
			"MEMBRANE_BODY_BYTES_PER_SECOND": "1000"},
			func(t *testing.T, c config.Config) {
				if got := c.LimitsFor(membrane.RoleReader); got != (config.RoleLimit{Complexity: 10, Depth: 4, RootFields: 7, Rate: 2.5, Burst: 3}) {
					t.Fatalf("reader %+v", got)
				}
				if got := c.LimitsFor(membrane.RoleAdmin); got != (config.RoleLimit{Complexity: 20, Depth: 30, RootFields: 9, Rate: 0, Burst: 1000}) {
					t.Fatalf("admin %+v", got)
				}
				if c.Limits.Tokens != 99 || c.RequestTimeout != time.Minute || c.ReadTimeout != 3*time.Second || c.IdleTimeout != 5*time.Minute || c.MaxBodyBytes != 100 || len(c.CORS.AllowedOrigins) != 2 ||
					c.CORS.AllowedOrigins[1] != "https://b" || c.TLSCertFile != "c.pem" || c.TLSKeyFile != "k.pem" || c.PersistedQueries.CacheSize != 0 || c.Limits.BodyBytesPerSecond != 1000 {
					t.Fatalf("%+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			tt.want(t, c)
		})
	}
}
