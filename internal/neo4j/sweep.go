package neo4j

import (
	"context"
	"fmt"
	"strings"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// DecayBatch is how many records one transaction of the decay sweep
// writes. Larger batches commit less often; 10,000 small property writes
// keep each transaction's state to a few megabytes.
const DecayBatch = 10_000

// sweep is a maintenance statement (the cypher/ file name) in its two
// forms: over every record, and over the records of given scopes (an index
// seek, which tests use).
type sweep struct{ name, all, scoped string }

// newSweep fills a maintenance statement's placeholders from the fixed
// fragments in cypher/.
func newSweep(name string) sweep {
	fill := func(records string) string {
		return strings.NewReplacer(
			"__RECORDS__", cypher.Must(records),
			"__EFFECTIVE__", cypher.Must("effective_salience"),
		).Replace(cypher.Must(name))
	}
	return sweep{name: name, all: fill("records_all"), scoped: fill("records_in_scopes")}
}

// statement returns the form for o and sets its scope parameter.
func (s sweep) statement(o membrane.SweepOptions, params map[string]any) string {
	if o.Scopes != nil {
		params["scopes"] = o.Scopes
		return s.scoped
	}
	return s.all
}

var decaySweep = newSweep("decay_sweep")

// DecaySweep materialises the effective salience at o.Now of every record
// in reach (membrane.EffectiveSalience, evaluated in Cypher), in batched
// transactions. It is idempotent: the value depends only on the base, the
// anchor and o.Now, so a second sweep at the same instant changes nothing.
//
// A sweep racing a revision of a record may write a salience computed from
// the base the revision replaced; the revision's own value or the next
// sweep corrects it, and the base, which all decay is computed from, is
// written only by revisions under their lock.
func (db *DB) DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error) {
	params := map[string]any{"now": o.Now.UTC(), "batch": int64(DecayBatch)}
	rows, err := autocommit(ctx, db, decaySweep.statement(o, params), params)
	if err != nil {
		return membrane.SweepResult{}, fmt.Errorf("decay sweep: %w", err)
	}
	return sweepResult(rows), nil
}

func sweepResult(rows []*neo4j.Record) membrane.SweepResult {
	var r membrane.SweepResult
	if len(rows) > 0 {
		r.Scanned = integer(rows[0].Values[0])
		r.Changed = integer(rows[0].Values[1])
	}
	return r
}
