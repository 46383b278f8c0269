package membrane

import (
	"fmt"
	"time"
)

// Policy holds the defaults applied to new records. The zero value is not
// useful; start from DefaultPolicy.
type Policy struct {
	// DefaultSensitivity applies when a write does not name one. Unlike the
	// reference system, captures honour it too.
	DefaultSensitivity Sensitivity
	// HalfLives is the default decay half-life per memory type, in seconds.
	HalfLives map[MemoryType]int64
	// ReinforcementGain is the default salience added by reinforce. The
	// reference defaulted it to 0, which made reinforce a no-op on salience.
	ReinforcementGain float64
}

// Source kinds of ingestion, which pick the default confidence.
const (
	SourceEvent        = "event"
	SourceToolOutput   = "tool_output"
	SourceObservation  = "observation"
	SourceOutcome      = "outcome"
	SourceWorkingState = "working_state"
)

// DefaultPolicy returns the reference system's ingestion defaults, with its
// half-life inconsistencies fixed: every path uses the per-type half-life.
func DefaultPolicy() Policy {
	return Policy{
		DefaultSensitivity: SensitivityLow,
		HalfLives: map[MemoryType]int64{
			TypeEpisodic:   3600,
			TypeWorking:    86400,
			TypeSemantic:   30 * 86400,
			TypeCompetence: 30 * 86400,
			TypePlanGraph:  30 * 86400,
			TypeEntity:     30 * 86400,
		},
		ReinforcementGain: 0.1,
	}
}

// Validate checks the policy itself (it comes from configuration).
func (p Policy) Validate() error {
	if !p.DefaultSensitivity.Valid() {
		return fmt.Errorf("invalid default sensitivity %q", p.DefaultSensitivity)
	}
	for _, t := range MemoryTypes {
		if p.HalfLives[t] < 1 {
			return fmt.Errorf("half-life of %s must be >= 1 second", t)
		}
	}
	if !(p.ReinforcementGain >= 0 && p.ReinforcementGain <= 1) {
		return fmt.Errorf("reinforcement gain must be in [0,1]")
	}
	return nil
}

// SourceConfidence is the initial confidence of a record ingested from a
// source of the given kind.
func SourceConfidence(kind string) float64 {
	switch kind {
	case SourceEvent:
		return 0.8
	case SourceToolOutput:
		return 0.9
	case SourceObservation:
		return 0.7
	case SourceOutcome:
		return 0.85
	case SourceWorkingState:
		return 1.0
	}
	return 0.5
}

// DefaultLifecycle is the lifecycle of a new record of type t created at now.
// Entities are the graph's spine: they are never auto-pruned.
func (p Policy) DefaultLifecycle(t MemoryType, now time.Time) Lifecycle {
	lc := Lifecycle{
		Curve:             DecayExponential,
		HalfLifeSeconds:   p.HalfLives[t],
		ReinforcementGain: p.ReinforcementGain,
		LastReinforcedAt:  now,
		DeletionPolicy:    DeleteAutoPrune,
	}
	if t == TypeEntity {
		lc.DeletionPolicy = DeleteManualOnly
	}
	return lc
}
