package config

import (
	"encoding/base64"
	"errors"
	"time"

	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
)

// JobsConfig returns the job runner's configuration, checking every
// schedule and bound.
func (c Config) JobsConfig() (jobs.Config, error) {
	return c.jobsConfig(), errors.Join(c.jobsErrors()...)
}

func (c Config) jobsConfig() jobs.Config {
	j := c.Jobs
	cfg := jobs.Config{
		Schedules: map[membrane.JobName]string{
			membrane.JobDecay: j.Decay, membrane.JobPrune: j.Prune, membrane.JobConsolidate: j.Consolidate,
			membrane.JobEmbed: j.Embed,
		},
		AtStart: []membrane.JobName{membrane.JobEmbed},
		Timeout: j.Timeout, LeaseTTL: j.LeaseTTL, HistoryRetention: j.HistoryRetention,
		IdempotencyRetention: j.IdempotencyRetention, RunRetention: j.RunRetention,
		Consolidation: membrane.DefaultConsolidationOptions(),
	}
	cfg.Consolidation.EpisodeWindow = j.EpisodeWindow
	if len(j.Scopes) > 0 {
		cfg.Scopes = j.Scopes
	}
	return cfg
}

// jobsErrors checks the jobs' settings; each error is a *FieldError.
func (c Config) jobsErrors() []error {
	cfg, j := c.jobsConfig(), c.Jobs
	var errs []error
	for _, job := range membrane.JobNames {
		if _, err := jobs.ParseSpec(cfg.Schedules[job]); err != nil {
			errs = append(errs, &FieldError{Field: "jobs." + string(job), Err: err})
		}
	}
	if j.Timeout <= 0 {
		errs = append(errs, fieldErr("jobs.timeout", "must be > 0"))
	}
	if j.LeaseTTL < time.Second {
		errs = append(errs, fieldErr("jobs.lease_ttl", "must be >= 1s"))
	}
	if j.HistoryRetention < 0 {
		errs = append(errs, fieldErr("jobs.history_retention", "must be >= 0"))
	}
	if j.IdempotencyRetention < 0 {
		errs = append(errs, fieldErr("jobs.idempotency_retention", "must be >= 0"))
	}
	if j.RunRetention < 0 {
		errs = append(errs, fieldErr("jobs.run_retention", "must be >= 0"))
	}
	if err := cfg.Consolidation.Validate(); err != nil {
		errs = append(errs, &FieldError{Field: "jobs.episode_window", Err: err})
	}
	return errs
}

// Policy returns the ingestion policy the configuration asks for.
func (c Config) Policy() (membrane.Policy, error) {
	p := membrane.DefaultPolicy()
	p.DefaultSensitivity = membrane.Sensitivity(c.DefaultSensitivity)
	p.ReinforcementGain = c.ReinforcementGain
	if err := p.Validate(); err != nil {
		// Of the policy, only these two are configured.
		field := "reinforcement_gain"
		if !p.DefaultSensitivity.Valid() {
			field = "default_sensitivity"
		}
		return p, &FieldError{Field: field, Err: err}
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
			return nil, &FieldError{Field: "api_keys", Err: err}
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
			return nil, fieldErr("encryption.keys", "key %q is not base64: %w", k.ID, err)
		}
		keys = append(keys, membrane.SealKey{ID: k.ID, Key: b})
	}
	s, err := membrane.NewSealer(membrane.Sensitivity(c.Encryption.From), keys, c.Encryption.ActiveKey)
	if err != nil {
		return nil, &FieldError{Field: "encryption", Err: err}
	}
	return s, nil
}
