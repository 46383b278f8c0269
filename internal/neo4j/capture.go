package neo4j

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.CaptureStore = (*DB)(nil)

// entityLockBuckets is how many EntityLock nodes captures lock on.
const entityLockBuckets = 4096

// Capture writes a capture in one write transaction: look up the entities
// its mentions may resolve to, plan, and, when the plan creates entities,
// lock their names' buckets and look up again (in the index and among the
// entities recently created under those locks) and plan again, so that of
// two concurrent captures creating the same entity the second reuses the
// first's; then apply the plan. With idem, a repeated request returns the
// first one's records and edges, stored under the key (Captured.Replayed).
func (db *DB) Capture(ctx context.Context, idem *membrane.Idempotency, c *membrane.Capture, actor string) (*membrane.Captured, error) {
	res, err := db.idempotent(ctx, idem, func(tx neo4j.ManagedTransaction) (*written, error) {
		found, err := db.lookupEntities(ctx, tx, cypher.Must("entity_lookup"), c.Scope(), c.Terms(), nil)
		if err != nil {
			return nil, err
		}
		plan := c.Plan(found, actor)
		sealed := db.sealer.Required(c.Primary.Sensitivity)
		if len(plan.NewTerms) > 0 {
			buckets := lockBuckets(c.Scope(), plan.NewTerms)
			if sealed || db.sealer.Searchable(membrane.TrustFromContext(ctx).Ceiling) {
				// Also those of the names' keyed digests, where sealed
				// entities are remembered (see below): a request that may
				// see sealed entities must find one created a moment ago,
				// before the eventually consistent index has it, whatever
				// the sensitivity of its own capture.
				buckets = mergeBuckets(buckets, lockBuckets(c.Scope(), db.sealer.NameDigests(c.Scope(), plan.NewTerms)))
			}
			if found, err = db.lookupEntities(ctx, tx, cypher.Must("entity_lock"), c.Scope(), c.Terms(), buckets); err != nil {
				return nil, err
			}
			plan = c.Plan(found, actor)
		}
		// New entities are remembered in the buckets of their names (locked
		// above), for the captures that wait on those locks.
		recent := []map[string]any{}
		for _, e := range plan.Created {
			if p, ok := e.Payload.(*membrane.EntityPayload); ok {
				names := membrane.EntityTerms(p)
				if sealed {
					// A bucket is a 12-bit hash of what it is computed
					// from: of a sealed entity's plaintext name it would
					// let someone holding the database check guesses of
					// the name against the entity's bucket.
					names = db.sealer.NameDigests(c.Scope(), names)
				}
				for _, b := range lockBuckets(c.Scope(), names) {
					recent = append(recent, map[string]any{"bucket": b, "id": e.ID})
				}
			}
		}
		if err := db.apply(ctx, tx, cypher.Must("capture_apply"), nil, nil, plan.Change, map[string]any{"recent": recent}); err != nil {
			return nil, err
		}
		return &written{recs: append([]*membrane.Record{c.Primary}, plan.Created...), edges: plan.Change.Edges}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	return &membrane.Captured{Primary: res.recs[0], Created: res.recs[1:], Edges: res.edges, Replayed: res.replayed}, nil
}

// lookupEntities returns the entities of scope named by any of terms that
// the request sees in full and that are not retracted, with stmt
// (entity_lookup, or entity_lock which first locks buckets).
func (db *DB) lookupEntities(ctx context.Context, tx neo4j.ManagedTransaction, stmt, scope string, terms []string, buckets []int64) ([]*membrane.Record, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	// Sealed entities only for a request that may see sealed records: the
	// keyed digests of the terms, or none (and the blind index is not
	// queried).
	names := db.sealer.EntityNameQuery(membrane.TrustFromContext(ctx).Ceiling, scope, terms)
	var blindQuery any
	if len(names) > 0 {
		blindQuery = blindNamesQuery(names)
	} else {
		names = []string{}
	}
	rows, err := collect(ctx, tx, stmt, gated(ctx, map[string]any{
		"query": entityQuery(scope, terms), "scope": scope, "terms": terms, "limit": int64(min(20*len(terms), 2000)),
		"buckets": buckets, "blindNames": names, "blindQuery": blindQuery,
	}))
	if err != nil {
		return nil, err
	}
	visible, err := db.visibleRows(ctx, rows, nil)
	if err != nil {
		return nil, err
	}
	// Only entities seen in full are linked to.
	out := visible[:0]
	for _, r := range visible {
		if !r.Redacted {
			out = append(out, r)
		}
	}
	return out, nil
}

// entityQuery is the Lucene query of entity_name_terms for terms in scope: the
// exact scope and any of the exact terms, each a quoted phrase (which the
// keyword analyzer keeps whole) with \ and " escaped.
func entityQuery(scope string, terms []string) string {
	qs := make([]string, len(terms))
	for i, t := range terms {
		qs[i] = "terms:" + luceneQuoted(t)
	}
	return "+scope:" + luceneQuoted(scope) + " +(" + strings.Join(qs, " ") + ")"
}

// luceneQuoted is s as one quoted Lucene phrase, which the keyword
// analyzer of the entity indexes keeps whole.
func luceneQuoted(s string) string {
	return `"` + phraseEscaper.Replace(s) + `"`
}

// phraseEscaper escapes \ and " in a quoted Lucene phrase; built once, as
// building a Replacer costs more than using it.
var phraseEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// scopeEntitiesQuery is the Lucene query of entity_name_terms for every
// entity of scope.
func scopeEntitiesQuery(scope string) string {
	return "scope:" + luceneQuoted(scope)
}

// blindNamesQuery is the Lucene query of entity_blind_names for digests:
// any of them, whole (hex digits need no escaping).
func blindNamesQuery(digests []string) string {
	qs := make([]string, len(digests))
	for i, d := range digests {
		qs[i] = `blindNames:"` + d + `"`
	}
	return strings.Join(qs, " ")
}

// mergeBuckets returns the sorted, distinct buckets of a and b.
func mergeBuckets(a, b []int64) []int64 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// lockBuckets are the sorted, distinct lock buckets of terms in scope.
func lockBuckets(scope string, terms []string) []int64 {
	var out []int64
	for _, t := range terms {
		h := fnv.New32a()
		h.Write([]byte(scope + "\x00" + t))
		if b := int64(h.Sum32() % entityLockBuckets); !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}
