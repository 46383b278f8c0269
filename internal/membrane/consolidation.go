package membrane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Consolidation vocabulary.
const (
	// ConsolidatedTag marks every record consolidation creates.
	ConsolidatedTag = "consolidated"
	// PredicateObservedIn is the predicate of facts extracted from
	// episodes, as in the reference: "<event kind> observed_in <summary>".
	PredicateObservedIn = "observed_in"
	// MixedScope is the scope of a competence learnt from episodes of
	// several scopes. It is restricted: only principals granted it (or
	// every scope) see it, so evidence from one scope never surfaces in
	// another.
	MixedScope = "consolidated:mixed-scope"
	// maxDerivedSources bounds the provenance sources copied onto one
	// consolidated record; DERIVED_FROM edges link every source.
	maxDerivedSources = 100
)

// ConsolidationOptions tunes consolidation.
type ConsolidationOptions struct {
	// EpisodeWindow: an episodic record loses salience once per window of
	// its age (the reference's 24 h).
	EpisodeWindow time.Duration
	// CompressionFactor multiplies the salience base once per window.
	CompressionFactor float64
	// CompressionFloor is where compression stops.
	CompressionFloor float64
	// MinCompetenceEpisodes successful episodes with one tool signature
	// make a competence.
	MinCompetenceEpisodes int
	// MinPlanSteps tool calls in one episode make a plan.
	MinPlanSteps int
	// Batch is how many episodes one transaction consolidates.
	Batch int
}

// DefaultConsolidationOptions are the reference's thresholds.
func DefaultConsolidationOptions() ConsolidationOptions {
	return ConsolidationOptions{EpisodeWindow: 24 * time.Hour, CompressionFactor: 0.5, CompressionFloor: 0.05,
		MinCompetenceEpisodes: 2, MinPlanSteps: 3, Batch: 2000}
}

// Validate checks options that come from configuration.
func (o ConsolidationOptions) Validate() error {
	switch {
	case o.EpisodeWindow < time.Second:
		return fmt.Errorf("consolidation episode window must be >= 1s")
	case !(o.CompressionFactor > 0 && o.CompressionFactor < 1):
		return fmt.Errorf("consolidation compression factor must be in (0,1)")
	case !(o.CompressionFloor >= 0 && o.CompressionFloor <= 1):
		return fmt.Errorf("consolidation compression floor must be in [0,1]")
	case o.MinCompetenceEpisodes < 1 || o.MinPlanSteps < 1:
		return fmt.Errorf("consolidation thresholds must be >= 1")
	case o.Batch < 1 || o.Batch > MaxBatch:
		return fmt.Errorf("consolidation batch must be 1 to %d", MaxBatch)
	}
	return nil
}

// CompressedBase applies episodic compression to r at now: the salience
// base is multiplied by the factor once for each whole window of age not
// compressed yet (Lifecycle.Compressions counts those), never below the
// floor, and a base at or below the floor is left alone, as are pinned and
// non-episodic records. ok is false when nothing changes. Because the count
// of windows is stored, a second run within a window changes nothing (the
// reference halved again on every run). cypher/compress_episodes.cypher
// applies the same rule set-based.
func (o ConsolidationOptions) CompressedBase(r *Record, now time.Time) (base float64, windows int64, ok bool) {
	lc := r.Lifecycle
	if r.Type != TypeEpisodic || lc.Pinned || lc.BaseSalience <= o.CompressionFloor {
		return lc.BaseSalience, lc.Compressions, false
	}
	windows = int64(now.Sub(r.CreatedAt) / o.EpisodeWindow)
	if windows <= lc.Compressions {
		return lc.BaseSalience, lc.Compressions, false
	}
	base = lc.BaseSalience * math.Pow(o.CompressionFactor, float64(windows-lc.Compressions))
	return math.Max(base, o.CompressionFloor), windows, true
}

// ConsolidationResult counts what one consolidation run did.
type ConsolidationResult struct {
	// Scanned counts episodes looked at, over all stages.
	Scanned            int64
	EpisodesCompressed int64
	FactsCreated       int64
	FactsReinforced    int64
	CompetencesCreated int64
	CompetencesUpdated int64
	PlansCreated       int64
	DuplicatesMerged   int64
	// StageSeconds is how long each stage took.
	StageSeconds map[string]float64
}

// Totals is the run's scanned count and the number of records it changed
// or created.
func (c *ConsolidationResult) Totals() SweepResult {
	return SweepResult{Scanned: c.Scanned, Changed: c.EpisodesCompressed + c.FactsCreated + c.FactsReinforced +
		c.CompetencesCreated + c.CompetencesUpdated + c.PlansCreated + c.DuplicatesMerged}
}

// Details is the per-stage breakdown recorded on the job run.
func (c *ConsolidationResult) Details() map[string]any {
	return map[string]any{
		"episodesCompressed": c.EpisodesCompressed, "factsCreated": c.FactsCreated, "factsReinforced": c.FactsReinforced,
		"competencesCreated": c.CompetencesCreated, "competencesUpdated": c.CompetencesUpdated,
		"plansCreated": c.PlansCreated, "duplicatesMerged": c.DuplicatesMerged, "stageSeconds": c.StageSeconds,
	}
}

// Succeeded reports whether r is an episode with outcome success.
func Succeeded(r *Record) bool {
	ep, ok := r.Payload.(*EpisodicPayload)
	return ok && ep.Outcome != nil && *ep.Outcome == OutcomeSuccess
}

// FactKey identifies a fact. Facts are the same when scope, subject,
// predicate and object all agree: the reference ignored the object, and so
// merged distinct facts, and ignored the scope, and so leaked across scopes.
type FactKey struct {
	Scope, Subject, Predicate, Object string
}

// Hash is a fixed-size digest of k, stored on semantic records as
// factKey so that a fact is found by one index seek whatever the length of
// its object (range indexes cannot hold long strings, and subject plus
// predicate alone are often shared by thousands of facts).
func (k FactKey) Hash() string {
	h := sha256.New()
	for _, s := range []string{k.Scope, k.Subject, k.Predicate, k.Object} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KeyOf returns the fact key of a semantic record.
func KeyOf(r *Record) (FactKey, bool) {
	p, ok := r.Payload.(*SemanticPayload)
	if !ok {
		return FactKey{}, false
	}
	return FactKey{Scope: r.Scope, Subject: p.Subject, Predicate: p.Predicate, Object: objectText(p.Object)}, true
}

// EpisodeFacts returns the facts a successful episode supports: one per
// timeline event with a summary, "<event kind> observed_in <summary>" (the
// reference's structural extraction), without repeats.
func EpisodeFacts(r *Record) []FactKey {
	ep, ok := r.Payload.(*EpisodicPayload)
	if !ok || !Succeeded(r) {
		return nil
	}
	var out []FactKey
	for _, e := range ep.Timeline {
		k := FactKey{Scope: r.Scope, Subject: e.EventKind, Predicate: PredicateObservedIn, Object: e.Summary}
		if e.Summary != "" && e.EventKind != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// consolidatedTags returns "consolidated" and the sources' tags, within
// the tag limit.
func consolidatedTags(extra []string, sources ...*Record) []string {
	tags := append([]string{ConsolidatedTag}, extra...)
	for _, s := range sources {
		for _, t := range s.Tags {
			if !slices.Contains(tags, t) && len(tags) < MaxTags {
				tags = append(tags, t)
			}
		}
	}
	return tags
}

func derivedEdge(from, to string, now time.Time) Relation {
	return Relation{Predicate: PredDerivedFrom, SourceID: from, TargetID: to, Weight: 1, CreatedAt: now, Actor: JobActor}
}

// ExtractFacts plans semantic extraction from a batch of successful
// episodes not consolidated into facts yet. Each fact an episode supports
// either exists (existing holds the non-retracted facts by key): it gets a
// DERIVED_FROM edge to the episode and, when active, one reinforcement per
// batch, a contested fact is not reinforced; or it is created, with the
// episode's scope, sensitivity and confidence, and DERIVED_FROM it. The
// edges mark episodes as done, so a second run over unchanged data finds
// nothing to do.
func (p Policy) ExtractFacts(episodes []*Record, existing map[FactKey]*Record, now time.Time) (*Change, error) {
	c := &Change{}
	created := map[FactKey]*Record{}
	reinforced := map[string]bool{}
	for _, ep := range episodes {
		for _, k := range EpisodeFacts(ep) {
			if f := existing[k]; f != nil {
				c.Edges = append(c.Edges, derivedEdge(f.ID, ep.ID, now))
				// One reinforcement per fact per run: a run works in
				// batches at one instant, and a fact reinforced at that
				// instant already got its gain.
				if f.Status == StatusActive && !reinforced[f.ID] && f.Lifecycle.LastReinforcedAt.Before(now) {
					reinforced[f.ID] = true
					rc, err := Reinforce(f, RevisionMeta{Actor: JobActor, Rationale: "supported by an episode"}, now)
					if err != nil {
						return nil, err
					}
					withRefs(rc.Audits[0], refTo(RefSupportedBy, ep))
					c.Updates = append(c.Updates, rc.Updates...)
					c.Audits = append(c.Audits, rc.Audits...)
				}
				continue
			}
			if f := created[k]; f != nil {
				c.Edges = append(c.Edges, derivedEdge(f.ID, ep.ID, now))
				continue
			}
			ts := now
			in := RecordInput{
				Type: TypeSemantic, Sensitivity: &ep.Sensitivity, Confidence: &ep.Confidence, Scope: &ep.Scope,
				Tags: consolidatedTags(nil, ep),
				Provenance: &ProvenanceInput{
					Sources:   []ProvenanceSource{{Kind: ProvenanceObservation, Ref: ep.ID, CreatedBy: JobActor, Timestamp: &ts}},
					CreatedBy: new(JobActor),
				},
				Payload: PayloadInput{Semantic: &SemanticPayload{
					Subject: k.Subject, Predicate: k.Predicate, Object: k.Object, Validity: &Validity{Mode: ValidityGlobal},
					Evidence:       []EvidenceRef{{SourceType: string(TypeEpisodic), SourceID: ep.ID, Timestamp: &ts}},
					RevisionPolicy: "replace",
				}},
			}
			f, err := p.BuildRecord(in, now)
			if err != nil {
				return nil, fmt.Errorf("fact from episode %s: %w", ep.ID, err)
			}
			created[k] = f
			c.Creates = append(c.Creates, f)
			c.Edges = append(c.Edges, derivedEdge(f.ID, ep.ID, now))
			c.Audits = append(c.Audits, withRefs(NewAuditEntry(f.ID, AuditCreate, JobActor, "extracted from a successful episode", now), refTo(RefDerivedFrom, ep)))
		}
	}
	return c, nil
}

// CompetenceSource is what competence extraction needs of an episode.
type CompetenceSource struct {
	ID          string
	Scope       string
	Sensitivity Sensitivity
	// Tools are the episode's tool names, sorted.
	Tools []string
}

// NewCompetenceSource returns the competence source of a successful
// episode with tool calls, or false.
func NewCompetenceSource(r *Record) (CompetenceSource, bool) {
	ep, ok := r.Payload.(*EpisodicPayload)
	if !ok || !Succeeded(r) || len(ep.ToolGraph) == 0 {
		return CompetenceSource{}, false
	}
	tools := make([]string, len(ep.ToolGraph))
	for i, n := range ep.ToolGraph {
		tools[i] = n.Tool
	}
	slices.Sort(tools)
	return CompetenceSource{ID: r.ID, Scope: r.Scope, Sensitivity: r.Sensitivity, Tools: tools}, true
}

// Signature is the tool signature: the sorted tool names joined with "+".
func (s CompetenceSource) Signature() string { return strings.Join(s.Tools, "+") }

// SkillName is the name of the competence learnt from a tool signature.
func SkillName(signature string) string { return "skill:" + signature }

// CompetenceScope is the scope of a competence learnt from sources: their
// common scope, or the restricted MixedScope when they differ. policy
// describes the choice for the audit trail, as the reference did, but
// names only the competence's own scope: readers granted MixedScope may
// not be granted the sources' scopes (DERIVED_FROM edges, gated, link
// the sources).
func CompetenceScope(sources []CompetenceSource) (scope, policy string) {
	var scopes []string
	for _, s := range sources {
		if !slices.Contains(scopes, s.Scope) {
			scopes = append(scopes, s.Scope)
		}
	}
	switch {
	case len(scopes) == 1 && scopes[0] == "":
		return "", "preserved(unscoped)"
	case len(scopes) == 1:
		return scopes[0], "preserved(" + scopes[0] + ")"
	}
	return MixedScope, MixedScope
}

func maxSensitivity(sources []CompetenceSource) Sensitivity {
	m := SensitivityPublic
	for _, s := range sources {
		if s.Sensitivity.Level() > m.Level() {
			m = s.Sensitivity
		}
	}
	return m
}

// ExtractCompetence plans a competence from successful episodes sharing
// one tool signature that no competence was learnt from yet. With existing
// (the active competence of that skill in the sources' scope), it counts
// the new successes, keeps the higher sensitivity, reinforces it once and
// links the sources; otherwise it creates one when there are at least
// MinCompetenceEpisodes sources (sensitivity the highest of the sources,
// scope per CompetenceScope). It returns nil when there is nothing to do.
func (p Policy) ExtractCompetence(sources []CompetenceSource, existing *Record, o ConsolidationOptions, now time.Time) (*Change, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	sig := sources[0].Signature()
	scope, policy := CompetenceScope(sources)
	sens := maxSensitivity(sources)
	c := &Change{}
	if existing != nil {
		cp, ok := existing.Payload.(*CompetencePayload)
		if !ok || existing.Status != StatusActive {
			return nil, Errorf(EPRECONDITION, "record %s is not an active competence", existing.ID)
		}
		if err := checkTarget(existing, "update", nil); err != nil {
			return nil, err
		}
		n := next(existing, now)
		// Reinforced once per run (its chunks share the instant).
		if existing.Lifecycle.LastReinforcedAt.Before(now) {
			reinforce(n, now)
		}
		np := *cp
		perf := PerformanceStats{}
		if cp.Performance != nil {
			perf = *cp.Performance
		}
		perf.SuccessCount += int64(len(sources))
		perf.SuccessRate = successRate(perf.SuccessCount, perf.FailureCount)
		perf.LastUsedAt = &now
		np.Performance = &perf
		n.Payload = &np
		if sens.Level() > n.Sensitivity.Level() {
			n.Sensitivity = sens
		}
		c.Updates, c.Result = []*Record{n}, n
		c.Audits = []*AuditEntry{audit(existing, n, AuditRevise, RevisionMeta{Actor: JobActor},
			fmt.Sprintf("%d more successful episodes with pattern %s", len(sources), sig), now)}
	} else {
		if len(sources) < o.MinCompetenceEpisodes {
			return nil, nil
		}
		recipe := make([]RecipeStep, len(sources[0].Tools))
		var required []string
		for i, t := range sources[0].Tools {
			recipe[i] = RecipeStep{Step: fmt.Sprintf("Step %d: invoke %s", i+1, t), Tool: t}
			if !slices.Contains(required, t) {
				required = append(required, t)
			}
		}
		// Provenance is shown to whoever sees the competence, so it names
		// the episodes only when they all share its scope (each at or below
		// its sensitivity, the highest of theirs). A mixed-scope competence
		// is linked to them only by DERIVED_FROM edges, which are gated.
		var prov []ProvenanceSource
		if scope != MixedScope {
			for _, s := range sources[:min(len(sources), maxDerivedSources)] {
				prov = append(prov, ProvenanceSource{Kind: ProvenanceOutcome, Ref: s.ID, CreatedBy: JobActor, Timestamp: &now})
			}
		}
		conf := 0.8
		in := RecordInput{
			Type: TypeCompetence, Sensitivity: &sens, Confidence: &conf, Scope: &scope,
			Tags:       []string{ConsolidatedTag, "auto-competence"},
			Provenance: &ProvenanceInput{Sources: prov, CreatedBy: new(JobActor)},
			Payload: PayloadInput{Competence: &CompetencePayload{
				SkillName: SkillName(sig), Triggers: []Trigger{{Signal: sig}}, Recipe: recipe, RequiredTools: required,
				Performance: &PerformanceStats{SuccessCount: int64(len(sources)), SuccessRate: 1, LastUsedAt: &now},
				Version:     "1",
			}},
		}
		n, err := p.BuildRecord(in, now)
		if err != nil {
			return nil, fmt.Errorf("competence %s: %w", sig, err)
		}
		c.Creates, c.Result = []*Record{n}, n
		c.Audits = []*AuditEntry{NewAuditEntry(n.ID, AuditCreate, JobActor, fmt.Sprintf(
			"Extracted from %d episodic records with pattern %s; policy: sensitivity=max(%s), scope=%s", len(sources), sig, sens, policy), now)}
	}
	for _, s := range sources {
		c.Edges = append(c.Edges, derivedEdge(c.Result.ID, s.ID, now))
	}
	return c, nil
}

func successRate(success, failure int64) float64 {
	if success+failure == 0 {
		return 0
	}
	return float64(success) / float64(success+failure)
}

// PlanWorthy reports whether an episode has enough tool calls to make a plan.
func PlanWorthy(r *Record, o ConsolidationOptions) bool {
	ep, ok := r.Payload.(*EpisodicPayload)
	return ok && len(ep.ToolGraph) >= o.MinPlanSteps
}

// ExtractPlans plans one plan graph per episode with at least MinPlanSteps
// tool calls and no plan yet: one node per tool call (op = the tool,
// params = its arguments), control edges in call order (stored as NEXT
// between plan steps) and data edges for depends_on (stored as DATA). The
// plan has the episode's scope and sensitivity and DERIVED_FROM it; its
// metrics count the episode as one execution.
func (p Policy) ExtractPlans(episodes []*Record, o ConsolidationOptions, now time.Time) (*Change, error) {
	c := &Change{}
	for _, r := range episodes {
		ep, ok := r.Payload.(*EpisodicPayload)
		if !ok || !PlanWorthy(r, o) {
			continue
		}
		nodes := make([]PlanNode, len(ep.ToolGraph))
		ids := map[string]bool{}
		var edges []PlanEdge
		for i, n := range ep.ToolGraph {
			nodes[i] = PlanNode{ID: n.ID, Op: n.Tool, Params: n.Args}
			ids[n.ID] = true
			if i > 0 {
				edges = append(edges, PlanEdge{From: ep.ToolGraph[i-1].ID, To: n.ID, Kind: EdgeControl})
			}
		}
		for _, n := range ep.ToolGraph {
			for _, d := range n.DependsOn {
				if ids[d] && d != n.ID {
					edges = append(edges, PlanEdge{From: d, To: n.ID, Kind: EdgeData})
				}
			}
		}
		intent := "unknown"
		if len(ep.Timeline) > 0 && ep.Timeline[0].EventKind != "" {
			intent = ep.Timeline[0].EventKind
		}
		failure := 0.0
		if ep.Outcome != nil && *ep.Outcome != OutcomeSuccess {
			failure = 1
		}
		conf := 0.7
		in := RecordInput{
			Type: TypePlanGraph, Sensitivity: &r.Sensitivity, Confidence: &conf, Scope: &r.Scope,
			Tags: consolidatedTags([]string{"auto-plangraph"}, r),
			Provenance: &ProvenanceInput{
				Sources:   []ProvenanceSource{{Kind: ProvenanceEvent, Ref: r.ID, CreatedBy: JobActor, Timestamp: &now}},
				CreatedBy: new(JobActor),
			},
			Payload: PayloadInput{PlanGraph: &PlanGraphPayload{
				PlanID: NewID(), Version: "1", Intent: intent, Nodes: nodes, Edges: edges,
				Metrics: &PlanMetrics{ExecutionCount: 1, FailureRate: failure, LastExecutedAt: &now},
			}},
		}
		n, err := p.BuildRecord(in, now)
		if err != nil {
			return nil, fmt.Errorf("plan from episode %s: %w", r.ID, err)
		}
		c.Creates = append(c.Creates, n)
		c.Edges = append(c.Edges, derivedEdge(n.ID, r.ID, now))
		c.Audits = append(c.Audits, withRefs(NewAuditEntry(n.ID, AuditCreate, JobActor,
			fmt.Sprintf("plan of %d steps extracted from an episode", len(nodes)), now), refTo(RefDerivedFrom, r)))
	}
	return c, nil
}

// MergedFact is the record that replaces identical facts: the payload of
// the oldest with every source's evidence, the highest confidence,
// sensitivity and effective salience at now, and every tag and provenance
// source (within the limits).
func MergedFact(sources []*Record, now time.Time) RecordInput {
	first := sources[0]
	fp := *first.Payload.(*SemanticPayload)
	fp.Evidence = nil
	in := RecordInput{Type: TypeSemantic, Scope: &first.Scope, Provenance: &ProvenanceInput{CreatedBy: new(JobActor)}}
	sens, conf, sal := first.Sensitivity, 0.0, 0.0
	var tags []string
	for _, s := range sources {
		if sp, ok := s.Payload.(*SemanticPayload); ok {
			for _, e := range sp.Evidence {
				if !slices.Contains(fp.Evidence, e) && len(fp.Evidence) < maxDerivedSources {
					fp.Evidence = append(fp.Evidence, e)
				}
			}
		}
		if s.Sensitivity.Level() > sens.Level() {
			sens = s.Sensitivity
		}
		conf = math.Max(conf, s.Confidence)
		sal = math.Max(sal, EffectiveSalience(s.Lifecycle.BaseSalience, s.Lifecycle, s.CreatedAt, now))
		for _, t := range s.Tags {
			if !slices.Contains(tags, t) && len(tags) < MaxTags {
				tags = append(tags, t)
			}
		}
		for _, src := range s.Provenance.Sources {
			if len(in.Provenance.Sources) < maxDerivedSources {
				in.Provenance.Sources = append(in.Provenance.Sources, src)
			}
		}
	}
	if len(fp.Evidence) == 0 && len(in.Provenance.Sources) == 0 {
		for _, s := range sources {
			fp.Evidence = append(fp.Evidence, EvidenceRef{SourceType: string(TypeSemantic), SourceID: s.ID})
		}
	}
	// A source stored before salience was bounded must not carry its value
	// into the fact (which would then fail validation and stop the job).
	sal = min(sal, MaxSalience)
	in.Sensitivity, in.Confidence, in.Salience, in.Tags = &sens, &conf, &sal, tags
	in.Payload = PayloadInput{Semantic: &fp}
	return in
}

// ConsolidationStage names the episodes a consolidation stage reads.
type ConsolidationStage string

// Stages that read episodes.
const (
	// StageFacts: successful episodes no fact was extracted from yet.
	StageFacts ConsolidationStage = "facts"
	// StageCompetences: successful episodes with tool calls no competence
	// was learnt from yet.
	StageCompetences ConsolidationStage = "competences"
	// StagePlans: episodes with tool calls no plan was extracted from yet.
	StagePlans ConsolidationStage = "plans"
)

// EpisodePage is a page of ConsolidationStore.Episodes.
type EpisodePage struct {
	// Episodes are the episodes of the page that open: one sealed under a
	// key the server lacks is skipped (docs/operations.md, "Unknown
	// keys"), so a page may hold fewer than it read.
	Episodes []*Record
	// Next is the cursor of the next page: the id of the last episode
	// read, skipped ones included (a page of skipped episodes only must
	// not end the sweep nor read them again), "" after the last page.
	Next string
}

// ConsolidationStore reads what consolidation works on. Implemented by the
// neo4j package; the writes go through RevisionStore.Revise, so every
// change is planned here and audited.
type ConsolidationStore interface {
	// CompressEpisodes applies CompressedBase to every episode in reach,
	// set-based, with a decay audit entry per compression.
	CompressEpisodes(ctx context.Context, so SweepOptions, o ConsolidationOptions) (SweepResult, error)
	// Episodes returns a page of up to o.Batch episodes in reach for a
	// stage, in id order after afterID ("" from the start).
	Episodes(ctx context.Context, stage ConsolidationStage, so SweepOptions, o ConsolidationOptions, afterID string) (EpisodePage, error)
	// FindFacts returns the oldest non-retracted fact that opens of each key.
	FindFacts(ctx context.Context, keys []FactKey) (map[FactKey]*Record, error)
	// FindCompetences returns the oldest active competence that opens of each key.
	FindCompetences(ctx context.Context, keys []CompetenceKey) (map[CompetenceKey]*Record, error)
	// DuplicateFacts returns the ids of identical active facts (same key),
	// one group per key with more than one, oldest first, at most
	// MaxMergeIDs per group and limit groups.
	DuplicateFacts(ctx context.Context, so SweepOptions, limit int) ([][]string, error)
	RevisionStore
}

// CompetenceKey finds the competence of a skill in a scope.
type CompetenceKey struct {
	SkillName, Scope string
}

// Hash is a digest of k, stored on competence records as skillKey so that
// consolidation finds a skill by one index seek, also on sensitive records,
// which do not store their skill name in clear.
func (k CompetenceKey) Hash() string {
	h := sha256.Sum256([]byte(k.Scope + "\x00" + k.SkillName))
	return hex.EncodeToString(h[:])
}
