package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/config"
)

// fields returns the fields named by err's *FieldErrors, in order.
func fields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*config.FieldError); ok {
			out = append(out, fe.Field)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// TestValidateNamesFields: Validate, on a configuration built in code (no
// file, no environment), names each setting that fails by its YAML key.
func TestValidateNamesFields(t *testing.T) {
	neg := -1
	tests := []struct {
		name string
		edit func(*config.Config)
		want []string
	}{
		{"defaults", func(*config.Config) {}, nil},
		{"mode", func(c *config.Config) { c.Mode = "staging" }, []string{"mode"}},
		{"log format", func(c *config.Config) { c.LogFormat = "xml" }, []string{"log_format"}},
		{"log level", func(c *config.Config) { c.LogLevel = "loud" }, []string{"log_level"}},
		{"sensitivity", func(c *config.Config) { c.DefaultSensitivity = "secret" }, []string{"default_sensitivity"}},
		{"gain", func(c *config.Config) { c.ReinforcementGain = 2 }, []string{"reinforcement_gain"}},
		{"api key", func(c *config.Config) { c.APIKeys = []config.APIKey{{KeySHA256: "zz", Actor: "a", Role: "writer"}} }, []string{"api_keys"}},
		{"encryption key", func(c *config.Config) { c.Encryption.Keys = []config.EncryptionKey{{ID: "k", Key: "!!!"}} }, []string{"encryption.keys"}},
		{"encryption from", func(c *config.Config) { c.Encryption.From = "secret" }, []string{"encryption"}},
		{"decay spec", func(c *config.Config) { c.Jobs.Decay = "hourly" }, []string{"jobs.decay"}},
		{"lease", func(c *config.Config) { c.Jobs.LeaseTTL = time.Millisecond }, []string{"jobs.lease_ttl"}},
		{"episode window", func(c *config.Config) { c.Jobs.EpisodeWindow = 0 }, []string{"jobs.episode_window"}},
		{"feed", func(c *config.Config) { c.Feed.Batch = 0 }, []string{"feed.batch"}},
		{"threshold", func(c *config.Config) { c.SelectionConfidenceThreshold = 0 }, []string{"selection_confidence_threshold"}},
		{"tls", func(c *config.Config) { c.TLSKeyFile = "k.pem" }, []string{"tls_cert_file"}},
		{"cors", func(c *config.Config) {
			c.CORS.AllowedOrigins, c.CORS.AllowCredentials = []string{"*"}, true
		}, []string{"cors.allowed_origins"}},
		{"general limit", func(c *config.Config) { c.Limits.Depth = -1 }, []string{"limits"}},
		{"admin limit", func(c *config.Config) { c.Limits.Roles["admin"] = config.RoleLimits{Depth: &neg} }, []string{"limits.roles.admin"}},
		{"unknown role", func(c *config.Config) { c.Limits.Roles["owner"] = config.RoleLimits{} }, []string{"limits.roles"}},
		{"embedding", func(c *config.Config) { c.Embedding.Endpoint = "http://e" }, []string{"embedding.model"}},
		{"all at once", func(c *config.Config) {
			c.Mode, c.LogFormat, c.Jobs.Prune, c.Embedding.Endpoint = "staging", "xml", "", "http://e"
		}, []string{"log_format", "jobs.prune", "mode", "embedding.model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.LogFormat = "text" // what Read derives from the mode
			tt.edit(&c)
			err := c.Validate()
			if got := fields(err); !slices.Equal(got, tt.want) {
				t.Fatalf("fields %q, want %q (%v)", got, tt.want, err)
			}
			for _, f := range tt.want {
				if !strings.Contains(err.Error(), "config: "+f+": ") {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
		})
	}
}

// TestReadDoesNotValidate: Read takes what is well-formed, valid or not;
// Load is Read then Validate. What cannot be read fails in Read.
func TestReadDoesNotValidate(t *testing.T) {
	e := env(map[string]string{"MEMBRANE_MODE": "staging", "MEMBRANE_MAX_DEPTH": "-3"})
	c, err := config.Read(nil, e)
	if err != nil || c.Mode != "staging" || c.Limits.Depth != -3 {
		t.Fatalf("read %q %d, %v", c.Mode, c.Limits.Depth, err)
	}
	if _, err := config.Load(nil, e); !slices.Equal(fields(err), []string{"mode", "limits"}) {
		t.Fatalf("load: %v", err)
	}
	for name, e := range map[string]map[string]string{
		"not a number": {"MEMBRANE_MAX_DEPTH": "deep"},
		"admin":        {"MEMBRANE_ADMIN_RATE_LIMIT": "fast"},
		"missing file": {"MEMBRANE_CONFIG": "/does/not/exist.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Read(nil, env(e))
			var fe *config.FieldError
			if err == nil || errors.As(err, &fe) {
				t.Fatalf("read error %v, want one that is not a validation's", err)
			}
			// A variable that does not parse is named in the error.
			for k := range e {
				if strings.HasPrefix(k, "MEMBRANE_MAX") || strings.HasPrefix(k, "MEMBRANE_ADMIN") {
					if !strings.HasPrefix(err.Error(), k+": ") {
						t.Errorf("error %q does not start with %s", err, k)
					}
				}
			}
		})
	}
}
