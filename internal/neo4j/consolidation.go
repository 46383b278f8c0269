package neo4j

import (
	"context"
	"errors"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.ConsolidationStore = (*DB)(nil)

var (
	compressEpisodes = newSweep("compress_episodes")
	duplicateFacts   = newSweep("duplicate_facts")
	episodeStages    = map[membrane.ConsolidationStage]string{
		membrane.StageFacts:       "episodes_facts",
		membrane.StageCompetences: "episodes_competences",
		membrane.StagePlans:       "episodes_plans",
	}
)

// CompressEpisodes applies episodic compression to every episode in reach,
// set-based in batched transactions (see membrane.CompressedBase).
func (db *DB) CompressEpisodes(ctx context.Context, so membrane.SweepOptions, o membrane.ConsolidationOptions) (membrane.SweepResult, error) {
	params := map[string]any{
		"now": so.Now.UTC(), "batch": int64(DecayBatch), "windowNanos": o.EpisodeWindow.Nanoseconds(),
		"factor": o.CompressionFactor, "floor": o.CompressionFloor, "actor": membrane.JobActor,
	}
	rows, err := autocommit(ctx, db, compressEpisodes.statement(so, params), params)
	if err != nil {
		return membrane.SweepResult{}, fmt.Errorf("compress episodes: %w", err)
	}
	return sweepResult(rows), nil
}

// Episodes returns a page of the episodes a consolidation stage works on,
// in id order after afterID.
func (db *DB) Episodes(ctx context.Context, stage membrane.ConsolidationStage, so membrane.SweepOptions, o membrane.ConsolidationOptions, afterID string) (membrane.EpisodePage, error) {
	name, ok := episodeStages[stage]
	if !ok {
		return membrane.EpisodePage{}, fmt.Errorf("episodes: unknown stage %q", stage)
	}
	params := map[string]any{"after": afterID, "limit": int64(o.Batch), "scopes": nil, "minSteps": int64(o.MinPlanSteps)}
	if so.Scopes != nil {
		params["scopes"] = so.Scopes
	}
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (membrane.EpisodePage, error) {
		rows, err := collect(ctx, tx, cypher.Must(name), params)
		if err != nil {
			return membrane.EpisodePage{}, err
		}
		var page membrane.EpisodePage
		for _, row := range rows {
			props, _ := row.Values[0].(map[string]any)
			r, err := db.recordFromProps(props)
			if errors.Is(err, errUnopened) {
				continue // sealed under a key this server lacks: skipped, every run
			} else if err != nil {
				return membrane.EpisodePage{}, err
			}
			page.Episodes = append(page.Episodes, r)
		}
		if len(rows) > 0 && len(rows) >= o.Batch {
			page.Next = str(rows[len(rows)-1].Values[0].(map[string]any)["id"])
		}
		return page, nil
	})
}

// keyCandidates is how many of the oldest records of one fact or
// competence key FindFacts and FindCompetences read: the first that opens
// is the one found. More than one, so that a record sealed under a key
// this server lacks (skipped) does not hide a readable one of the same
// key, which each supporting episode would then duplicate.
const keyCandidates = 5

// firstOpening returns the first of candidates (a list of node property
// maps, oldest first) that opens, nil when none does.
func (db *DB) firstOpening(candidates any) (*membrane.Record, error) {
	list, _ := candidates.([]any)
	for _, c := range list {
		p, _ := c.(map[string]any)
		r, err := db.recordFromProps(p)
		if errors.Is(err, errUnopened) {
			continue // sealed under a key this server lacks: as if absent
		} else if err != nil {
			return nil, err
		}
		return r, nil
	}
	return nil, nil
}

// FindFacts returns the oldest non-retracted fact that opens of each key,
// in one query: one index seek per digest of the key, the unkeyed one of
// facts in clear and the keyed ones (under every configured key) of sealed
// facts.
func (db *DB) FindFacts(ctx context.Context, keys []membrane.FactKey) (map[membrane.FactKey]*membrane.Record, error) {
	byID := make(map[string]membrane.FactKey, len(keys))
	ks := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		id := k.Hash()
		if _, dup := byID[id]; !dup {
			byID[id] = k
			ks = append(ks, map[string]any{"id": id, "digests": append([]string{id}, db.sealer.Digests(membrane.DigestFact, k.Fields()...)...)})
		}
	}
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (map[membrane.FactKey]*membrane.Record, error) {
		rows, err := collect(ctx, tx, cypher.Must("find_facts"), map[string]any{"keys": ks, "candidates": int64(keyCandidates)})
		if err != nil {
			return nil, err
		}
		out := make(map[membrane.FactKey]*membrane.Record, len(rows))
		for _, row := range rows {
			r, err := db.firstOpening(row.Values[1])
			if err != nil {
				return nil, err
			}
			if r != nil {
				out[byID[str(row.Values[0])]] = r
			}
		}
		return out, nil
	})
}

// FindCompetences returns the oldest active competence that opens of each
// key, in one query, by its digests as FindFacts.
func (db *DB) FindCompetences(ctx context.Context, keys []membrane.CompetenceKey) (map[membrane.CompetenceKey]*membrane.Record, error) {
	ks := make([]map[string]any, len(keys))
	for i, k := range keys {
		ks[i] = map[string]any{"skillName": k.SkillName, "scope": k.Scope,
			"digests": append([]string{k.Hash()}, db.sealer.Digests(membrane.DigestSkill, k.Fields()...)...)}
	}
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (map[membrane.CompetenceKey]*membrane.Record, error) {
		rows, err := collect(ctx, tx, cypher.Must("find_competences"), map[string]any{"keys": ks, "candidates": int64(keyCandidates)})
		if err != nil {
			return nil, err
		}
		out := make(map[membrane.CompetenceKey]*membrane.Record, len(rows))
		for _, row := range rows {
			k, _ := row.Values[0].(map[string]any)
			r, err := db.firstOpening(row.Values[1])
			if err != nil {
				return nil, err
			}
			if r != nil {
				out[membrane.CompetenceKey{SkillName: str(k["skillName"]), Scope: str(k["scope"])}] = r
			}
		}
		return out, nil
	})
}

// DuplicateFacts returns groups of identical active facts in reach.
func (db *DB) DuplicateFacts(ctx context.Context, so membrane.SweepOptions, limit int) ([][]string, error) {
	params := map[string]any{"limit": int64(limit), "maxIds": int64(membrane.MaxMergeIDs)}
	stmt := duplicateFacts.statement(so, params)
	return read(ctx, db, func(tx neo4j.ManagedTransaction) ([][]string, error) {
		rows, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		out := make([][]string, len(rows))
		for i, row := range rows {
			out[i] = strs(row.Values[0])
		}
		return out, nil
	})
}

// PlanSubgraph reads the stored subgraph of plan record id: its steps in
// order and the links between them.
func (db *DB) PlanSubgraph(ctx context.Context, id string) ([]membrane.PlanStep, []membrane.PlanLink, error) {
	type graph struct {
		steps []membrane.PlanStep
		links []membrane.PlanLink
	}
	g, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (graph, error) {
		rows, err := collect(ctx, tx, cypher.Must("plan_subgraph"), map[string]any{"id": id})
		if err != nil {
			return graph{}, err
		}
		var g graph
		for _, row := range rows {
			p, _ := row.Values[0].(map[string]any)
			s := membrane.PlanStep{ID: str(p["id"]), StepID: str(p["stepId"]), Op: str(p["op"]), Params: str(p["params"]),
				Guards: str(p["guards"]), Position: integer(p["position"])}
			g.steps = append(g.steps, s)
			links, _ := row.Values[1].([]any)
			for _, l := range links {
				lm, _ := l.(map[string]any)
				g.links = append(g.links, membrane.PlanLink{From: s.StepID, To: str(lm["to"]), Type: str(lm["type"])})
			}
		}
		return g, nil
	})
	return g.steps, g.links, err
}
