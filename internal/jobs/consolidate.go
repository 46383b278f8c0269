package jobs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// ConsolidationStore is what consolidation needs: reads of episodes, facts
// and competences, and revisions to write what the domain plans.
type ConsolidationStore interface {
	membrane.ConsolidationStore
}

// consolidate runs the stages in the reference's order: episodic
// compression, fact extraction, competence extraction, plan extraction,
// then duplicate resolution. Each stage is idempotent on its own (see
// membrane), so the run as a whole is: a second run over unchanged data
// creates and changes nothing. Writes are planned by pure functions of
// internal/membrane and applied by Revise, one transaction per batch of
// episodes (per signature for competences, per group for merges), with
// their audit entries.
func (r *Runner) consolidate(ctx context.Context, so membrane.SweepOptions) (*membrane.ConsolidationResult, error) {
	res := &membrane.ConsolidationResult{StageSeconds: map[string]float64{}}
	for _, stage := range []struct {
		name string
		run  func(context.Context, membrane.SweepOptions, *membrane.ConsolidationResult) error
	}{
		{"compression", r.compress}, {"facts", r.extractFacts}, {"competences", r.extractCompetences},
		{"plans", r.extractPlans}, {"duplicates", r.mergeDuplicates},
	} {
		// Wall-clock durations for operators (in the run's details), not
		// the injected clock the rules compute with.
		start := time.Now()
		err := stage.run(ctx, so, res)
		res.StageSeconds[stage.name] = time.Since(start).Seconds()
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// compress applies episodic compression, set-based (membrane.CompressedBase).
func (r *Runner) compress(ctx context.Context, so membrane.SweepOptions, res *membrane.ConsolidationResult) error {
	cr, err := r.store.CompressEpisodes(ctx, so, r.cfg.Consolidation)
	res.Scanned += cr.Scanned
	res.EpisodesCompressed = cr.Changed
	return err
}

// eachPage calls fn with every page of the episodes of a stage.
func (r *Runner) eachPage(ctx context.Context, stage membrane.ConsolidationStage, so membrane.SweepOptions, res *membrane.ConsolidationResult, fn func([]*membrane.Record) error) error {
	after := ""
	for {
		page, err := r.store.Episodes(ctx, stage, so, r.cfg.Consolidation, after)
		if err != nil {
			return err
		}
		res.Scanned += int64(len(page.Episodes))
		if len(page.Episodes) > 0 {
			if err := fn(page.Episodes); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		after = page.Next
	}
}

// extractFacts turns successful episodes into facts, a page at a time:
// one read of the existing facts the page supports, one transaction that
// locks them and applies membrane.ExtractFacts.
func (r *Runner) extractFacts(ctx context.Context, so membrane.SweepOptions, res *membrane.ConsolidationResult) error {
	return r.eachPage(ctx, membrane.StageFacts, so, res, func(eps []*membrane.Record) error {
		var keys []membrane.FactKey
		for _, ep := range eps {
			keys = append(keys, membrane.EpisodeFacts(ep)...)
		}
		if len(keys) == 0 {
			return nil
		}
		found, err := r.store.FindFacts(ctx, keys)
		if err != nil {
			return err
		}
		lock := make([]string, 0, len(found))
		for _, f := range found {
			lock = append(lock, f.ID)
		}
		var created, reinforced int
		_, err = r.store.Revise(ctx, nil, lock, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			existing := make(map[membrane.FactKey]*membrane.Record, len(found))
			for k, f := range found {
				existing[k] = locked[f.ID]
			}
			c, err := r.policy.ExtractFacts(eps, existing, so.Now)
			if err == nil {
				created, reinforced = len(c.Creates), len(c.Updates)
			}
			return c, err
		})
		res.FactsCreated += int64(created)
		res.FactsReinforced += int64(reinforced)
		return err
	})
}

// extractCompetences groups every candidate episode by tool signature and
// plans one competence per signature (membrane.ExtractCompetence), in
// chunks of a batch of episodes per transaction.
func (r *Runner) extractCompetences(ctx context.Context, so membrane.SweepOptions, res *membrane.ConsolidationResult) error {
	groups := map[string][]membrane.CompetenceSource{}
	if err := r.eachPage(ctx, membrane.StageCompetences, so, res, func(eps []*membrane.Record) error {
		for _, ep := range eps {
			if s, ok := membrane.NewCompetenceSource(ep); ok {
				groups[s.Signature()] = append(groups[s.Signature()], s)
			}
		}
		return nil
	}); err != nil || len(groups) == 0 {
		return err
	}
	sigs := slices.Sorted(maps.Keys(groups))
	keys := make([]membrane.CompetenceKey, len(sigs))
	for i, sig := range sigs {
		scope, _ := membrane.CompetenceScope(groups[sig])
		keys[i] = membrane.CompetenceKey{SkillName: membrane.SkillName(sig), Scope: scope}
	}
	found, err := r.store.FindCompetences(ctx, keys)
	if err != nil {
		return err
	}
	o := r.cfg.Consolidation
	for i, sig := range sigs {
		group := groups[sig]
		existing := found[keys[i]]
		if existing == nil && len(group) < o.MinCompetenceEpisodes {
			continue // not learnt yet: a later episode may complete the group
		}
		if existing == nil {
			res.CompetencesCreated++
		} else {
			res.CompetencesUpdated++
		}
		// The first chunk creates the competence (or updates the one
		// found); later chunks update what the previous chunk wrote.
		for start := 0; start < len(group); start += o.Batch {
			chunk := group[start:min(start+o.Batch, len(group))]
			var lock []string
			if existing != nil {
				lock = []string{existing.ID}
			}
			res, err := r.store.Revise(ctx, nil, lock, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
				var cur *membrane.Record
				if existing != nil {
					cur = locked[existing.ID]
				}
				c, err := r.policy.ExtractCompetence(chunk, cur, o, so.Now)
				if c == nil && err == nil {
					c = &membrane.Change{}
				}
				return c, err
			})
			if err != nil {
				return err
			}
			if res.Record != nil {
				existing = res.Record
			}
		}
	}
	return nil
}

// extractPlans turns episodes with enough tool calls into plan graphs, a
// page per transaction.
func (r *Runner) extractPlans(ctx context.Context, so membrane.SweepOptions, res *membrane.ConsolidationResult) error {
	return r.eachPage(ctx, membrane.StagePlans, so, res, func(eps []*membrane.Record) error {
		c, err := r.policy.ExtractPlans(eps, r.cfg.Consolidation, so.Now)
		if err != nil || len(c.Creates) == 0 {
			return err
		}
		if _, err := r.store.Revise(ctx, nil, nil, nil, func(_, _ map[string]*membrane.Record) (*membrane.Change, error) {
			return c, nil
		}); err != nil {
			return err
		}
		res.PlansCreated += int64(len(c.Creates))
		return nil
	})
}

// maxMergeRounds bounds duplicate resolution in one run; a group larger
// than MaxMergeIDs takes a round per MaxMergeIDs records.
const maxMergeRounds = 100

// mergeDuplicates merges identical active facts through the merge
// revision (audited, the sources retracted and linked), one transaction
// per group, until none are left.
func (r *Runner) mergeDuplicates(ctx context.Context, so membrane.SweepOptions, res *membrane.ConsolidationResult) error {
	meta := membrane.RevisionMeta{Actor: membrane.JobActor, Rationale: "identical active facts (same scope, subject, predicate and object)"}
	for round := 0; round < maxMergeRounds; round++ {
		groups, err := r.store.DuplicateFacts(ctx, so, 1000)
		if err != nil || len(groups) == 0 {
			return err
		}
		merged := res.DuplicatesMerged
		for _, ids := range groups {
			if _, err := r.store.Revise(ctx, nil, ids, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
				sources := make([]*membrane.Record, len(ids))
				for i, id := range ids {
					sources[i] = locked[id]
				}
				return r.policy.Merge(sources, membrane.MergedFact(sources, so.Now), meta, so.Now)
			}); err != nil {
				// A fact revised or deleted since the group was read is
				// left to the next run, and a group holding a fact sealed
				// under a key this server lacks to a server that has it
				// (docs/operations.md, "Unknown keys"); anything else
				// fails the run.
				if c := membrane.ErrorCode(err); c == membrane.ECONFLICT || c == membrane.ENOTFOUND || errors.Is(err, membrane.ErrUnopened) {
					r.log.Warn("duplicate facts not merged this run", "ids", ids, "err", err)
					continue
				}
				return err
			}
			res.DuplicatesMerged++
		}
		if res.DuplicatesMerged == merged {
			return nil // only groups left to the next run
		}
	}
	return nil
}
