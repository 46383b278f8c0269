package membrane

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
)

// Retrieval bounds. Every retrieval reads a bounded number of candidates
// however large the store is.
const (
	DefaultRetrieveLimit = 10
	MaxRetrieveLimit     = 100
	// MaxQueryBytes bounds a retrieval query's text.
	MaxQueryBytes = 4096
	// MaxQueryTerms bounds the terms sent to the full-text index.
	MaxQueryTerms = 64
	// MaxSelectionCandidates bounds the competence and plan_graph records
	// the selector scores (the reference's 20).
	MaxSelectionCandidates = 20
	// DefaultSelectionThreshold is the selection confidence below which
	// more information is needed (reference §1.5, config
	// selection_confidence_threshold).
	DefaultSelectionThreshold = 0.7
	// RecencyHalfLife is the half-life of the recency part of the score.
	RecencyHalfLife = 7 * 24 * time.Hour
	// ContextSeeds bounds the best matches (by SeedScore) whose graph
	// neighbourhood (session neighbours, entities, derived facts) a
	// retrieval expands.
	ContextSeeds = 40
	// ContextFanout bounds the records reached from one seed entity (or
	// one seed, for derived records): the newest of those that can be
	// hits among the first ContextFanoutScan links read from it.
	ContextFanout = 25
	// ContextFanoutScan bounds the records that pass the gate, the
	// request's filters and the status test among those read from one
	// seed before its ContextFanout records are chosen: a seed's records
	// are sorted only within this window, not all of a hub entity's
	// thousands. Links to records that fail those tests are not counted,
	// so reading stops at the first ContextFanoutScan that pass or at the
	// seed's last link: a hub whose records the request mostly cannot see
	// or filters out is read in full.
	ContextFanoutScan = 4 * ContextFanout
	// SecondHop weighs a session neighbour two NEXT hops away against one
	// next to the match.
	SecondHop = 0.5
	// ContextAfter and ContextBefore weigh a match's text score passed to
	// the records after it and before it in its session chain. What
	// follows a match is its reply, result or consequence, which is what a
	// question about the match usually asks for; what precedes it is its
	// cause or setting, related but less often the answer
	// (docs/retrieval.md, "Ranking with the graph").
	ContextAfter  = 1.0
	ContextBefore = 0.5
	// EntityFanIn weighs the text score an entity seed passes to the
	// records that MENTION it or are ABOUT it, against the full score a
	// seed passes to the entities it names. A matching entity is often a
	// hub of its topic (every fact about billing-service is ABOUT it), so
	// at full weight its records outranked the records that match the
	// question itself; the entity a matching fact names is one record,
	// often the answer (the person a fact about being on call is about).
	// On fixture.json ½ lowered no figure and raised some, on both
	// configurations (on one test database MRR 0.966 -> 1.000, on another
	// full-text recall@5 0.932 -> 0.947); anything from 0 to ¾ measured
	// the same, 1 lower (docs/retrieval.md).
	EntityFanIn = 0.5
	// EntityFloor makes a record reached through an entity link at least
	// this part as relevant as its entity signal says: relevance is at
	// least EntityFloor·entity. The entity a best match names (the person a
	// fact about being on call is about) has no words of the question and
	// is rarely near it as a vector, so as one more weighted signal it sank
	// under every record that shares a few words or a topic with the
	// question, the more so with vectors (whose weight dilutes the rest):
	// on fixture.json with vectors, "who is on call for billing incidents"
	// ranked Priya Raman below 10. As a floor, the entity the best match
	// names ranks as half as relevant as that match, below the matches
	// themselves. On fixture.json ½ raised recall@5 with vectors from
	// 0.947 to 0.962 and changed nothing on full text; ½ to ¾ measured the
	// same. The conversation eval has no entities, so it cannot move it.
	EntityFloor = 0.5
)

// ContextNorm divides the sum of a record's session neighbours' weighted
// text scores: one neighbour on each side at one hop and at two hops at
// most (its context is 1 when all four are the best match).
var ContextNorm = (ContextAfter + ContextBefore) * (1 + SecondHop)

// SeedScore is how well a match of a retrieval (one the caller sees in
// full) matches, as its graph neighbours get it: its text score relative
// to the best text score among the matches and its vector similarity
// (0 without a query vector, or when it has no embedding; floored at 0),
// fused with the Fusion weights of the two:
//
//	(Fusion.Text·text + Fusion.Vector·vector) / (Fusion.Text + Fusion.Vector)
//
// The best ContextSeeds by this score are the seeds, and each passes it,
// relative to the best seed's, as T. A match found by its meaning alone
// passes its relevance on as one found by its words does: the reply after
// a turn that says what the question asks in other words is as likely the
// answer. On the conversation eval with vectors this took turn recall@10
// from 0.826 to 0.837 and MRR from 0.566 to 0.571 (with all conversations
// in one memory 0.773 to 0.784); a vector weight from 1 to 8 measured the
// same, and full text alone is unchanged (T is text relative to the best).
// retrieve_candidates.cypher computes it in the store.
func SeedScore(text, vector float64) float64 {
	return (Fusion.Text*unitClamp(text) + Fusion.Vector*unitClamp(vector)) / (Fusion.Text + Fusion.Vector)
}

// SessionNeighbour is what one seed (one of the best matches the caller
// sees in full, by SeedScore) passes to a record of its session chain.
type SessionNeighbour struct {
	// T is the seed's SeedScore relative to the best seed's, in [0,1].
	T float64
	// Hops is the distance along the chain: 1 or 2 (farther passes
	// nothing).
	Hops int
	// After is true when the record comes after the seed in the session.
	After bool
}

// ContextScore is the context signal of a record from its session
// neighbours among the seeds:
//
//	min(1, Σ dir·hop·T / ContextNorm)
//
// with dir = ContextAfter for a record after the seed and ContextBefore
// for one before it, hop = 1 one NEXT hop away and SecondHop two hops
// away. retrieve_candidates.cypher computes the same sum in the store (its
// weights are passed from here); this is its definition, table-tested.
func ContextScore(ns []SessionNeighbour) float64 {
	sum := 0.0
	for _, n := range ns {
		w := ContextBefore
		if n.After {
			w = ContextAfter
		}
		switch n.Hops {
		case 1:
		case 2:
			w *= SecondHop
		default:
			continue
		}
		sum += w * unitClamp(n.T)
	}
	return unitClamp(sum / ContextNorm)
}

// FusionWeights weigh the relevance signals of a candidate. Relevance is
// the weighted sum of its signals, divided by the best such sum among the
// candidates (so the best candidate has relevance 1, as the best text
// match had before the graph took part). Text alone gives the order of a
// plain full-text search; the graph signals lift records next to, about
// or derived from the matches, and bring them in when their own text does
// not match (docs/retrieval.md, "Ranking with the graph").
type FusionWeights struct {
	Text    float64
	Vector  float64
	Context float64
	Entity  float64
	Derived float64
	// Time weighs TimeScore, when the query names a time (TimeHint).
	Time float64
}

// Total is the sum of the weights of the signals that take part in q's
// ranking: Vector only with a query vector, Time only with a time hint.
func (f FusionWeights) Total(q RetrieveQuery) float64 {
	t := f.Text + f.Context + f.Entity + f.Derived
	if len(q.Vector) > 0 {
		t += f.Vector
	}
	if !q.Time.Empty() {
		t += f.Time
	}
	return t
}

// Fusion are the fusion weights retrieval uses. Vector weighs twice the
// text: with the offline embedder (all-MiniLM-L6-v2) the conversation
// eval's recall@10, recall@1, MRR and nDCG@10 all rise from weight 1 to 2
// and stay flat to 5; 2 is the low end of that plateau, so that a query's
// exact words still count. Time weighs 2: on the conversation eval with
// vectors, temporal questions' recall@10 is 0.65 without it, 0.71 at 1
// and 0.74 at 2 (all questions: 0.809, 0.817, 0.820).
var Fusion = FusionWeights{Text: 1, Vector: 2, Context: 1.5, Entity: 0.3, Derived: 0.3, Time: 2}

// Weights weigh the parts of a retrieval score. They sum to 1, so a score is
// in [0,1].
type Weights struct {
	Relevance  float64
	Salience   float64
	Recency    float64
	Confidence float64
}

// QueryWeights apply when a retrieval has a query that does not ask for the
// latest of something: relevance to it dominates, and salience and
// confidence order records of similar relevance. Recency takes no part: a
// question about what was said in March, or about the first offer, is not
// answered better by what was said last, and a preference for the newest
// records would outweigh its own order (conversation eval, eval/README.md).
var QueryWeights = Weights{Relevance: 0.7, Salience: 0.2, Recency: 0, Confidence: 0.1}

// LatestWeights apply when a retrieval's query asks for the latest of
// something (OrderLatest): QueryWeights with a tenth given to recency.
var LatestWeights = Weights{Relevance: 0.6, Salience: 0.2, Recency: 0.1, Confidence: 0.1}

// BrowseWeights apply without a query (nothing to be relevant to).
var BrowseWeights = Weights{Relevance: 0, Salience: 0.5, Recency: 0.3, Confidence: 0.2}

// RetrieveQuery asks for the records most useful for a query, layer by
// layer (working, entity, semantic, competence, plan_graph, episodic, or
// the types asked for).
type RetrieveQuery struct {
	// Text is the query as given; Terms its normalised search terms.
	Text  string
	Terms []string
	// Layers are the memory types searched, in layer order.
	Layers []MemoryType
	// Scopes, when not nil, restricts candidates to these scopes ("" is
	// unscoped), within the request's trust.
	Scopes []string
	// Tags, when not empty, restricts candidates to records carrying all
	// of them, as the records filter's tags do (see FilterTags).
	Tags             []string
	MinSalience      float64
	Limit            int
	IncludeRetracted bool
	// AsOf ranks records as they were then (status and salience), with
	// decay and recency measured at that instant.
	AsOf *time.Time
	// Vector is the query's embedding when vector search is configured.
	Vector []float64
	// Now is the ranking instant when AsOf is not set (the store's clock
	// when zero).
	Now time.Time
	// Time is the time the query's text asks about, read at the ranking
	// instant (WithTimeHint); empty when it names none.
	Time TimeHint
	// Order is the order of time the query's text asks for (WithTimeHint).
	Order TimeOrder
}

// WithTimeHint returns q with the time its text names, read relative to
// the ranking instant now, and the order of time it asks for.
func (q RetrieveQuery) WithTimeHint(now time.Time) RetrieveQuery {
	q.Time = ParseTimeHint(q.Text, now)
	q.Order, _ = ParseTimeOrder(q.Text)
	return q
}

// searchText validates free text searched through the full-text index and
// returns it trimmed, with its search terms (AnalyzeQuery). Retrieve's
// query and the records text filter both go through it, so that one text
// analysis (and one set of bounds) serves every text search. Punctuation
// alone is no question: refused. Words that are all stop words give no
// terms and match nothing (see RetrieveQuery.Unmatchable).
func searchText(v *validator, field, s string) (text string, terms []string) {
	text = strings.TrimSpace(s)
	if len(s) > MaxQueryBytes {
		v.add(field, "exceeds %d bytes", MaxQueryBytes)
		return text, nil
	}
	terms = AnalyzeQuery(text)
	if text != "" && !strings.ContainsFunc(text, isWordRune) {
		v.add(field, "has no searchable words")
	}
	return text, terms
}

// FilterTags restricts q to records carrying all of tags (all-of, as the
// records filter's tags). It is separate from NewRetrieveQuery so that
// retrieve and retrieveGraph's roots share it.
func (q *RetrieveQuery) FilterTags(tags []string) error {
	v := &validator{}
	v.tags("tags", tags)
	if err := v.err(); err != nil {
		return err
	}
	q.Tags = tags
	return nil
}

// NewRetrieveQuery validates a retrieval's arguments and applies defaults.
func NewRetrieveQuery(query *string, types []MemoryType, scopes []string, minSalience *float64, limit *int64, includeRetracted *bool, asOf *time.Time) (RetrieveQuery, error) {
	q := RetrieveQuery{Limit: DefaultRetrieveLimit, AsOf: asOf, Scopes: scopes}
	v := &validator{}
	if len(scopes) > MaxTags {
		v.add("scopes", "too many scopes: %d (max %d)", len(scopes), MaxTags)
	}
	v.strs("scopes", scopes)
	if query != nil {
		q.Text, q.Terms = searchText(v, "query", *query)
	}
	for _, t := range types {
		if !t.Valid() {
			v.add("memoryTypes", "unknown memory type %q", t)
		}
	}
	q.Layers = Layers(types)
	if minSalience != nil {
		if math.IsNaN(*minSalience) || math.IsInf(*minSalience, 0) || *minSalience < 0 {
			v.add("minSalience", "must be a finite number >= 0")
		}
		q.MinSalience = *minSalience
	}
	if limit != nil {
		if *limit < 1 || *limit > MaxRetrieveLimit {
			v.add("limit", "must be between 1 and %d", MaxRetrieveLimit)
		}
		q.Limit = int(*limit)
	}
	if includeRetracted != nil {
		q.IncludeRetracted = *includeRetracted
	}
	return q, v.err()
}

// Layers returns the asked-for types in layer order, or every layer when
// none is asked for.
func Layers(types []MemoryType) []MemoryType {
	if len(types) == 0 {
		return slices.Clone(MemoryTypes)
	}
	out := make([]MemoryType, 0, len(types))
	for _, t := range MemoryTypes {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	return out
}

// LayerIndex is the position of t in layer order (working first).
func LayerIndex(t MemoryType) int {
	if i := slices.Index(MemoryTypes, t); i >= 0 {
		return i
	}
	return len(MemoryTypes)
}

// FetchLimit is how many of the best candidates the store returns with
// their records: twice the limit, so that Diversify can bring forward hits
// of other sessions from beyond the first Limit.
func (q RetrieveQuery) FetchLimit() int { return 2 * q.Limit }

// ScanLimit bounds the full-text matches read for one retrieval before
// gating and filters: 10 per wanted result, at least 100, at most 2000;
// with a query vector 3 per wanted result (at least 60), since the
// vectors bring candidates of their own and every full-text match then
// costs a cosine, and its part of a full-text query over a large store
// grows with the matches asked for. When gating leaves fewer candidates
// than wanted and the index had more, the store scans further (8 times as
// many, up to 20,000). With vectors, 60 full-text matches instead of 100
// for a limit of 20 moved the conversation eval's recall@10 by -0.002
// (0.837; run-to-run noise is about 0.005) and took 2.8 ms off a
// retrieval at 100k records (docs/BENCHMARKS.md, [Q5]).
func (q RetrieveQuery) ScanLimit() int {
	if len(q.Vector) > 0 {
		return min(max(3*q.Limit, 60), 2000)
	}
	return min(max(10*q.Limit, 100), 2000)
}

// VectorScanLimit is how many nearest embeddings a retrieval with a query
// vector reads from the vector index (at most ScanLimit): 2.5 per wanted
// result, at least 50. The index query is a costly part of a retrieval
// with vectors and its cost grows with the neighbours asked for (at 100k
// records about 11 ms for 100, 7 ms for 50, 5 ms for 20: docs/BENCHMARKS.md,
// [Q5]); on the conversation eval (limit 20) 30 neighbours instead of 50
// took 2.7 ms off a retrieval at 100k but 0.009 off recall@10 (0.830
// against 0.839), more than the run-to-run noise of about 0.005.
func (q RetrieveQuery) VectorScanLimit() int { return min(max(5*q.Limit/2, 50), q.ScanLimit()) }

// HasQuery reports whether there is anything to be relevant to.
func (q RetrieveQuery) HasQuery() bool { return len(q.Terms) > 0 || len(q.Vector) > 0 }

// Unmatchable reports a query whose text has no search terms (only stop
// words) and no vector: it matches no record, so retrieval returns no hits
// rather than browsing as if there were no query.
func (q RetrieveQuery) Unmatchable() bool {
	return q.Text != "" && len(q.Terms) == 0 && len(q.Vector) == 0
}

// Candidate is a record matched for a retrieval, with what ranking needs.
type Candidate struct {
	ID   string
	Type MemoryType
	// Text is the raw full-text score (0 when the text did not match).
	Text float64
	// Vector is the cosine similarity of the record's embedding to the
	// query's, or nil when either is missing.
	Vector *float64
	// Context, Entity and Derived are the graph signals, each in [0,1],
	// from the text scores t of the best matches the caller sees in full
	// (relative to the best of them): context is ContextScore of the
	// record's session neighbours among them; entity the best t of an
	// entity the record MENTIONS or is ABOUT; derived the best t of a
	// record it is DERIVED_FROM or that derives from it.
	Context, Entity, Derived float64
	// Salience is the effective salience at the ranking instant.
	Salience   float64
	Confidence float64
	CreatedAt  time.Time
	// At is the record's time for a time hint: an episode's event time in
	// its session, else its creation.
	At time.Time
	// Session is the session chain the record is part of (its scope and
	// session id), empty for none: hits of one session are diversified
	// (Diversify).
	Session string
	// Loaded is the record, when it was loaded with the candidate (the
	// store loads those likely to be hits or selected).
	Loaded *Record
}

// ScoreParts are the components of a score, each in [0,1].
type ScoreParts struct {
	// Relevance is Fused divided by the best Fused among the candidates,
	// at least EntityFloor times Entity.
	Relevance float64
	// Fused is the weighted sum of the signals (Fusion) divided by the sum
	// of the weights of the signals that can take part (Vector only with a
	// query vector).
	Fused float64
	// Text is the full-text score divided by the best one of the query
	// among the records the caller may see.
	Text float64
	// Vector is the query's cosine similarity, floored at 0; nil without vectors.
	Vector *float64
	// Context, Entity and Derived: see Candidate.
	Context    float64
	Entity     float64
	Derived    float64
	Salience   float64
	Recency    float64
	Confidence float64
	// Time is TimeScore of the record's time for the query's time hint (0
	// without one).
	Time float64
	// Redundancy is what Diversify took off the score: SessionRedundancy
	// for each better hit of the same session.
	Redundancy float64
	// Order is what Chronology added to the score for a query asking for
	// the latest or the first (0 otherwise).
	Order float64
}

// Hit is a ranked candidate.
type Hit struct {
	Candidate
	Score float64
	Parts ScoreParts
	// Record is the record as the caller sees it (loaded after ranking).
	Record *Record
}

// Recency is 2^(-age/RecencyHalfLife): 1 for a record created now, 1/2 a
// week later. A creation time after now counts as now.
func Recency(createdAt, now time.Time) float64 {
	age := now.Sub(createdAt)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-age.Hours() / RecencyHalfLife.Hours())
}

func unitClamp(x float64) float64 {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	return math.Min(x, 1)
}

// Rank scores candidates and returns them best first (all of them; the
// caller cuts to its limit). The score is
//
//	w.Relevance·relevance + w.Salience·min(1, salience) + w.Recency·recency + w.Confidence·confidence
//
// with w = QueryWeights when the query has terms or a vector, else
// BrowseWeights; relevance = max(fused / max fused over the candidates,
// EntityFloor·entity), where
//
//	fused = (Fusion.Text·text + Fusion.Vector·vector + Fusion.Context·context + Fusion.Entity·entity + Fusion.Derived·derived + Fusion.Time·time) / Σ weights
//
// (vector and its weight only with a query vector, time only with a time
// hint), text = Text / max Text
// over the candidates. Ties break by layer order, then newest, then id.
func Rank(q RetrieveQuery, cands []Candidate, now time.Time) []Hit {
	maxText := 0.0
	for _, c := range cands {
		maxText = math.Max(maxText, c.Text)
	}
	maxFused := 0.0
	for _, c := range cands {
		maxFused = math.Max(maxFused, fuse(q, c, maxText).Fused)
	}
	return RankRelativeTo(q, cands, maxText, maxFused, now)
}

// fuse returns c's relevance signals, text relative to maxText, and their
// fusion (Relevance not yet set).
func fuse(q RetrieveQuery, c Candidate, maxText float64) ScoreParts {
	f := Fusion
	p := ScoreParts{Context: unitClamp(c.Context), Entity: unitClamp(c.Entity), Derived: unitClamp(c.Derived)}
	if maxText > 0 {
		p.Text = unitClamp(c.Text / maxText)
	}
	sum := f.Text*p.Text + f.Context*p.Context + f.Entity*p.Entity + f.Derived*p.Derived
	if len(q.Vector) > 0 {
		if c.Vector != nil {
			v := unitClamp(*c.Vector)
			p.Vector = &v
			sum += f.Vector * v
		}
	}
	if !q.Time.Empty() {
		p.Time = TimeScore(q.Time, c.At)
		sum += f.Time * p.Time
	}
	p.Fused = sum / f.Total(q)
	return p
}

// RankRelativeTo is Rank with text scores relative to maxText, the best
// text score among all candidates (of which cands may be a part), and
// relevance relative to maxFused, the best fused score among them.
func RankRelativeTo(q RetrieveQuery, cands []Candidate, maxText, maxFused float64, now time.Time) []Hit {
	w := q.Weights()
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		p := fuse(q, c, maxText)
		p.Salience, p.Recency, p.Confidence = unitClamp(c.Salience), Recency(c.CreatedAt, now), unitClamp(c.Confidence)
		if maxFused > 0 {
			p.Relevance = max(unitClamp(p.Fused/maxFused), EntityFloor*p.Entity)
		}
		hits[i] = Hit{Candidate: c, Parts: p,
			Score: w.Relevance*p.Relevance + w.Salience*p.Salience + w.Recency*p.Recency + w.Confidence*p.Confidence}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score != b.Score:
			return cmpDesc(a.Score, b.Score)
		case LayerIndex(a.Type) != LayerIndex(b.Type):
			return LayerIndex(a.Type) - LayerIndex(b.Type)
		case !a.CreatedAt.Equal(b.CreatedAt):
			return b.CreatedAt.Compare(a.CreatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits
}

func cmpDesc(a, b float64) int {
	if a > b {
		return -1
	}
	return 1
}

// Weights are the weights q's scores are computed with: BrowseWeights
// without a query, LatestWeights for a query asking for the latest of
// something (q.Order, read by WithTimeHint), else QueryWeights.
func (q RetrieveQuery) Weights() Weights {
	switch {
	case !q.HasQuery():
		return BrowseWeights
	case q.Order == OrderLatest:
		return LatestWeights
	}
	return QueryWeights
}

// Retrieval is the result of a retrieval: the hits, best first, and the
// selection among its competence and plan_graph candidates.
type Retrieval struct {
	Hits      []Hit
	Selection Selection
	// Weights are the weights the scores were computed with.
	Weights Weights
	// VectorUsed is true when the query's embedding took part.
	VectorUsed bool
	// Time is the time the query named, which ranking favoured.
	Time TimeHint
	// Order is the order the query asked for, which ranking favoured.
	Order TimeOrder
	// Warnings tell the caller what degraded the retrieval (WarnNoVector);
	// the transport returns them beside the data.
	Warnings []string
	// pending are selection candidates waiting for Complete.
	pending []SelectionCandidate
}

// SessionRedundancy is what each better hit of the same session takes off
// a hit's score in Diversify. An answer often lies in two sessions (a plan
// and its outcome, a fact and its correction), while the session context
// lifts a best match's neighbours together: without it the first ten hits
// were mostly one session's, and a plain keyword search covered more of the
// sessions the evidence was in (eval/README.md).
const SessionRedundancy = 0.03

// Diversify reorders ranked hits (best first) greedily: each place goes
// to the hit with the best score less SessionRedundancy times the number
// of hits of its session already placed (hits of no session are never
// penalised; ties keep the ranked order). Each hit's Score is the adjusted
// score and Parts.Redundancy what was taken off, so that scores still
// decrease down the list.
func Diversify(ranked []Hit) []Hit {
	out := make([]Hit, 0, len(ranked))
	rest := slices.Clone(ranked)
	placed := map[string]int{}
	penalty := func(h Hit) float64 {
		if h.Session == "" {
			return 0
		}
		return SessionRedundancy * float64(placed[h.Session])
	}
	for len(rest) > 0 {
		best, bestScore := 0, math.Inf(-1)
		for i, h := range rest {
			if s := h.Score - penalty(h); s > bestScore {
				best, bestScore = i, s
			}
			if penalty(h) == 0 && h.Score <= bestScore {
				// Ranked order: no later hit can beat an unpenalised one.
				break
			}
		}
		h := rest[best]
		h.Parts.Redundancy = penalty(h)
		h.Score = bestScore
		out = append(out, h)
		if h.Session != "" {
			placed[h.Session]++
		}
		rest = slices.Delete(rest, best, best+1)
	}
	return out
}

// Finish ranks cands for q at now, text scores relative to maxText and
// relevance to maxFused (the store's, over all candidates): the
// top q.Limit hits, and the selection over the best MaxSelectionCandidates
// competence and plan_graph candidates. Hits and selected records are those
// the candidates were loaded with; missing lists the ids of those that were
// not (the store loads them and fills them in).
func Finish(q RetrieveQuery, cands []Candidate, maxText, maxFused, threshold float64, now time.Time) (r *Retrieval, missing []string) {
	ranked := Diversify(Chronology(RankRelativeTo(q, cands, maxText, maxFused, now), q.Order))
	out := &Retrieval{Weights: q.Weights(), VectorUsed: len(q.Vector) > 0, Time: q.Time, Order: q.Order}
	var sel []SelectionCandidate
	for _, h := range ranked {
		if (h.Type == TypeCompetence || h.Type == TypePlanGraph) && len(sel) < MaxSelectionCandidates {
			rec := h.Loaded
			if rec == nil {
				// A stand-in until the store loads it.
				rec = &Record{ID: h.ID, Type: h.Type}
				missing = append(missing, h.ID)
			}
			sel = append(sel, SelectionCandidate{Record: rec, Similarity: h.Candidate.Vector})
		}
	}
	out.Hits = ranked[:min(len(ranked), q.Limit)]
	for i := range out.Hits {
		if out.Hits[i].Record = out.Hits[i].Loaded; out.Hits[i].Record == nil && !slices.Contains(missing, out.Hits[i].ID) {
			missing = append(missing, out.Hits[i].ID)
		}
	}
	if len(missing) == 0 {
		out.Selection = Select(sel, threshold, now)
	} else {
		out.pending = sel
	}
	return out, missing
}

// TimeWindow is the time the query named, or nil when it named none.
func (r *Retrieval) TimeWindow() *TimeHint {
	if r.Time.Empty() {
		return nil
	}
	return &r.Time
}

// Complete fills in the records that Finish reported missing (those not
// found are left out) and computes the selection.
func (r *Retrieval) Complete(recs map[string]*Record, threshold float64, now time.Time) {
	hits := r.Hits[:0]
	for _, h := range r.Hits {
		if h.Record == nil {
			h.Record = recs[h.ID]
		}
		if h.Record != nil {
			hits = append(hits, h)
		}
	}
	r.Hits = hits
	if r.pending != nil {
		sel := r.pending[:0]
		for _, c := range r.pending {
			if c.Record.Payload == nil && recs[c.Record.ID] != nil {
				c.Record = recs[c.Record.ID]
			}
			if c.Record.Payload != nil {
				sel = append(sel, c)
			}
		}
		r.Selection, r.pending = Select(sel, threshold, now), nil
	}
}

// Graph retrieval bounds.
const (
	DefaultRootLimit = 10
	MaxRootLimit     = 100
	DefaultNodeLimit = 25
	MaxNodeLimit     = 1000
	DefaultEdgeLimit = 100
	MaxEdgeLimit     = 5000
	DefaultMaxHops   = 1
	MaxHops          = 5
)

// GraphQuery asks for ranked roots and their neighbourhood.
type GraphQuery struct {
	Roots     RetrieveQuery
	NodeLimit int
	EdgeLimit int
	MaxHops   int
}

// NewGraphQuery validates a graph retrieval's arguments and applies defaults.
func NewGraphQuery(query *string, types []MemoryType, scopes []string, rootLimit, nodeLimit, edgeLimit, maxHops *int64) (GraphQuery, error) {
	roots, err := NewRetrieveQuery(query, types, scopes, nil, nil, nil, nil)
	fields := ErrorFields(err)
	if err != nil && fields == nil {
		return GraphQuery{}, err
	}
	g := GraphQuery{Roots: roots, NodeLimit: DefaultNodeLimit, EdgeLimit: DefaultEdgeLimit, MaxHops: DefaultMaxHops}
	g.Roots.Limit = DefaultRootLimit
	v := &validator{errs: fields}
	bound := func(field string, p *int64, lo, hi int, dst *int) {
		if p == nil {
			return
		}
		if *p < int64(lo) || *p > int64(hi) {
			v.add(field, "must be between %d and %d", lo, hi)
		}
		*dst = int(*p)
	}
	bound("rootLimit", rootLimit, 1, MaxRootLimit, &g.Roots.Limit)
	bound("nodeLimit", nodeLimit, 1, MaxNodeLimit, &g.NodeLimit)
	bound("edgeLimit", edgeLimit, 0, MaxEdgeLimit, &g.EdgeLimit)
	bound("maxHops", maxHops, 0, MaxHops, &g.MaxHops)
	if err := v.err(); err != nil {
		return g, err
	}
	// Roots count towards the node limit.
	g.Roots.Limit = min(g.Roots.Limit, g.NodeLimit)
	return g, nil
}

// Fanout bounds the edges read from one record per hop: a hub (an entity
// mentioned by thousands of records) costs no more than this to expand.
func (g GraphQuery) Fanout() int { return max(g.EdgeLimit, g.NodeLimit) + 1 }

// GraphNode is a record of a graph retrieval.
type GraphNode struct {
	Record *Record
	// Root is true for the ranked roots; Hit is then their ranking.
	Root bool
	Hit  *Hit
	// Hop is the distance from the nearest root (0 for roots).
	Hop int
}

// GraphRetrieval is ranked roots and their bounded neighbourhood.
type GraphRetrieval struct {
	Nodes     []*GraphNode
	Edges     []*Relation
	Selection Selection
	// Truncated is true when the node or edge limit left records or edges out.
	Truncated bool
}

// RetrievalStore retrieves. Each call reads one snapshot with a bounded
// number of statements (a retrieval is mostly one); gating happens in
// Cypher.
type RetrievalStore interface {
	// Retrieve ranks records for q with the request's trust.
	Retrieve(ctx context.Context, q RetrieveQuery, threshold float64) (*Retrieval, error)
	// RetrieveGraph ranks roots for g.Roots and expands their neighbourhood
	// in both directions, only through records the request sees in full.
	RetrieveGraph(ctx context.Context, g GraphQuery, threshold float64) (*GraphRetrieval, error)
}
