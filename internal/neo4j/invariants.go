package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// invariantChecks names the statements of CheckInvariants, in the order
// they run.
var invariantChecks = []string{"invariants_records", "invariants_edges", "invariants_chains", "invariants_audits"}

// CheckInvariants checks the structural invariants that every committed
// write keeps for the records of one scope (cypher/invariants_*.cypher):
// no half-written record, an audit entry for every revision edge, supersede
// chains with one head, no orphan audit entry. It returns a description of
// each violation found (at most 20 per check), none when the data is
// consistent. Tests run it after killing the server mid-write and after
// load; an operator may run it after an incident.
func (db *DB) CheckInvariants(ctx context.Context, scope string) ([]string, error) {
	return read(ctx, db, func(tx neo4j.ManagedTransaction) ([]string, error) {
		var out []string
		for _, name := range invariantChecks {
			rows, err := collect(ctx, tx, cypher.Must(name), map[string]any{"scope": scope})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			for _, r := range rows {
				v, _ := r.Get("violation")
				out = append(out, fmt.Sprintf("%s: %v", name, v))
			}
		}
		return out, nil
	})
}

// RecordStatuses returns the status of each record among ids that exists,
// by id, without decoding the records: for checking in bulk that
// acknowledged writes are there. It ignores trust: callers are tests and
// operators, never a request.
func (db *DB) RecordStatuses(ctx context.Context, ids []string) (map[string]string, error) {
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (map[string]string, error) {
		rows, err := collect(ctx, tx, cypher.Must("records_status"), map[string]any{"ids": ids})
		if err != nil {
			return nil, err
		}
		out := make(map[string]string, len(rows))
		for _, r := range rows {
			id, _ := r.Get("id")
			st, _ := r.Get("status")
			out[str(id)] = str(st)
		}
		return out, nil
	})
}

// DeleteScope deletes every record of scope, with its edges and audit
// entries, leaving no tombstone: for tests that fill the shared test
// database, never reachable from a request.
func (db *DB) DeleteScope(ctx context.Context, scope string) error {
	for _, stmt := range cypher.Statements("delete_scope") {
		if _, err := autocommit(ctx, db, stmt, map[string]any{"scope": scope}); err != nil {
			return err
		}
	}
	return nil
}
