package membrane

import (
	"strings"
	"time"
)

// Predicate names a relation between two records. The vocabulary is fixed:
// relationship types in the graph are only ever these, never raw input.
type Predicate string

// Predicates. The first three are lineage edges, written by revisions (and
// derived_from by captures, from a fact to its capture), never by addRelation.
const (
	PredSupersedes  Predicate = "supersedes"
	PredDerivedFrom Predicate = "derived_from"
	PredContestedBy Predicate = "contested_by"
	PredSupports    Predicate = "supports"
	PredContradicts Predicate = "contradicts"
	PredDependsOn   Predicate = "depends_on"
	PredUses        Predicate = "uses"
	PredMentions    Predicate = "mentions"
	PredAbout       Predicate = "about"
	PredReferences  Predicate = "references"
	PredCausedBy    Predicate = "caused_by"
	PredRelatedTo   Predicate = "related_to"
	// PredNext links an episode to the next one of its session (scope and
	// EpisodicPayload.SessionID, in time order). The store writes it when
	// an episode is created and relinks around a deleted one; never
	// addRelation.
	PredNext Predicate = "next"
)

// Predicates lists the whole vocabulary.
var Predicates = []Predicate{PredSupersedes, PredDerivedFrom, PredContestedBy, PredSupports, PredContradicts,
	PredDependsOn, PredUses, PredMentions, PredAbout, PredReferences, PredCausedBy, PredRelatedTo, PredNext}

// LineagePredicates are the edges lineage follows by default.
var LineagePredicates = []Predicate{PredSupersedes, PredDerivedFrom, PredContestedBy}

// Valid reports whether p is in the vocabulary.
func (p Predicate) Valid() bool {
	for _, q := range Predicates {
		if p == q {
			return true
		}
	}
	return false
}

// IsLineage reports whether p is a revision edge, which only revisions write.
func (p Predicate) IsLineage() bool {
	return p == PredSupersedes || p == PredDerivedFrom || p == PredContestedBy
}

// RelType is the Neo4j relationship type of p: SUPERSEDES, DERIVED_FROM…
func (p Predicate) RelType() string { return strings.ToUpper(string(p)) }

// PredicateOfRelType maps a relationship type back to its predicate.
func PredicateOfRelType(t string) Predicate { return Predicate(strings.ToLower(t)) }

// Relation is an edge between two records.
type Relation struct {
	Predicate Predicate
	SourceID  string
	TargetID  string
	Weight    float64
	CreatedAt time.Time
	Actor     string
}

// Direction selects edges by their direction relative to a record.
type Direction string

// Directions. For lineage, OUT reaches ancestors (what a record came from:
// the record it supersedes, its sources) and IN reaches descendants.
const (
	DirOut  Direction = "out"
	DirIn   Direction = "in"
	DirBoth Direction = "both"
)

// Valid reports whether d is a known direction.
func (d Direction) Valid() bool { return d == DirOut || d == DirIn || d == DirBoth }
