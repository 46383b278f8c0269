package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"
	"go.yaml.in/yaml/v3"
)

// Load reads the configuration of a process started with args (without the
// program name) in an environment looked up by getenv, and validates it.
func Load(args []string, getenv func(string) string) (Config, error) {
	c, err := Read(args, getenv)
	if err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Read reads the configuration without validating it: the defaults, then
// the YAML file (-config or MEMBRANE_CONFIG), the environment and the
// flags, each over the one before. It fails only on what cannot be read:
// a missing file, bad YAML, a value not of its setting's type.
func Read(args []string, getenv func(string) string) (Config, error) {
	c := Default()
	settings := Settings()
	fs, path, flags := flagSet(settings, getenv)
	// The error is returned (and printed once by the caller); -h is
	// membrane -h's to answer (internal/app.CLI).
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		// A word where a flag was expected is a mistyped subcommand
		// (membrane help once started the server), not something to
		// serve past.
		return c, fmt.Errorf("unexpected argument %q (see membrane -h)", fs.Arg(0))
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
	if err := c.readEnv(settings, getenv); err != nil {
		return c, err
	}
	// The exporter reads the standard variables itself; they only tell
	// that tracing is wanted.
	c.OTelFromEnv = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	for _, s := range settings {
		if v := flags[s.Flag]; s.Flag != "" && *v != "" {
			// Flags are strings only (Settings' tags say which fields).
			reflect.ValueOf(&c).Elem().FieldByIndex(s.index).SetString(*v)
		}
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
	// Defaults that depend on other settings. Without an active key named,
	// the first key is active (the one place that says so: reseal reports
	// it too).
	if c.Encryption.ActiveKey == "" && len(c.Encryption.Keys) > 0 {
		c.Encryption.ActiveKey = c.Encryption.Keys[0].ID
	}
	if c.LogFormat == "" {
		c.LogFormat = "text"
		if c.Mode == ModeProduction {
			c.LogFormat = "json"
		}
	}
	return c, nil
}

// readEnv sets each setting whose variable getenv finds (an empty value is
// unset). Variables are decoded one at a time, in Settings order, so that
// an error names its variable; the admin role's variables set its entry of
// limits.roles and leave its other limits as they were.
func (c *Config) readEnv(settings []Setting, getenv func(string) string) error {
	admin := c.Limits.Roles[string(adminEnvRole)]
	adminSet := false
	parsers := c.envParsers()
	for _, s := range settings {
		v := ""
		if s.Env != "" {
			v = getenv(s.Env)
		}
		if v == "" {
			continue
		}
		opts := env.Options{Environment: map[string]string{s.Env: v}, FuncMap: parsers}
		var target any = c
		if s.inMap {
			target, opts.Prefix, adminSet = &admin, s.envPrefix, true
		}
		if err := env.ParseWithOptions(target, opts); err != nil {
			return fmt.Errorf("%s: %w", s.Env, err)
		}
	}
	if adminSet {
		if c.Limits.Roles == nil {
			c.Limits.Roles = map[string]RoleLimits{}
		}
		c.Limits.Roles[string(adminEnvRole)] = admin
	}
	return nil
}

// envParsers decode the environment's values where a setting's type alone
// does not say how, or where the library's own parsing differs from what
// the variables have always accepted.
func (c *Config) envParsers() map[reflect.Type]env.ParserFunc {
	return map[reflect.Type]env.ParserFunc{
		// Base 10 and as wide as int (the library's int is 32 bits).
		reflect.TypeFor[int](): func(v string) (any, error) { return strconv.Atoi(v) },
		// Comma-separated, blanks and spaces dropped.
		reflect.TypeFor[[]string](): func(v string) (any, error) { return splitList(v), nil },
		// A JSON list, added to the keys of the YAML file.
		reflect.TypeFor[[]APIKey](): func(v string) (any, error) {
			var keys []APIKey
			if err := json.Unmarshal([]byte(v), &keys); err != nil {
				return nil, fmt.Errorf("want a JSON list of {key_sha256, actor, role, max_sensitivity, scopes}: %w", err)
			}
			return append(append([]APIKey(nil), c.APIKeys...), keys...), nil
		},
		// "KEY" or "id:KEY,id2:KEY2": these keys replace the file's, and
		// the first is active whatever the file named.
		reflect.TypeFor[[]EncryptionKey](): func(v string) (any, error) {
			var keys []EncryptionKey
			for _, part := range strings.Split(v, ",") {
				id, key, ok := strings.Cut(strings.TrimSpace(part), ":")
				if !ok {
					id, key = "default", id
				}
				keys = append(keys, EncryptionKey{ID: id, Key: key})
			}
			c.Encryption.ActiveKey = ""
			return keys, nil
		},
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

// flagSet declares the server's flags: -config and one per setting that
// has a flag.
func flagSet(settings []Setting, getenv func(string) string) (*flag.FlagSet, *string, map[string]*string) {
	fs := flag.NewFlagSet("membrane", flag.ContinueOnError)
	path := fs.String("config", getenv("MEMBRANE_CONFIG"), "path of a YAML configuration file")
	flags := map[string]*string{}
	for _, s := range settings {
		if s.Flag != "" {
			flags[s.Flag] = fs.String(s.Flag, "", fmt.Sprintf("%s (env %s)", s.Usage, s.Env))
		}
	}
	return fs, path, flags
}

// PrintFlags writes the server's flags and their usage to w (membrane -h).
func PrintFlags(w io.Writer) {
	fs, _, _ := flagSet(Settings(), func(string) string { return "" })
	fs.SetOutput(w)
	fs.PrintDefaults()
}
