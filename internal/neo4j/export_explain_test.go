package neo4j

import (
	"context"
	"errors"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Explain has Neo4j plan stmt with params (EXPLAIN: nothing runs, nothing
// is read or written) in an auto-commit transaction, which every statement
// may run in (CALL {} IN TRANSACTIONS needs one). It returns the server's
// own error, unmapped, so that a failing statement says what is wrong.
func (db *DB) Explain(ctx context.Context, stmt string, params map[string]any) error {
	_, err := db.ExplainPlan(ctx, stmt, params)
	return err
}

// ExplainPlan is Explain that returns the plan.
func (db *DB) ExplainPlan(ctx context.Context, stmt string, params map[string]any) (neo4j.Plan, error) {
	s := db.session(ctx, neo4j.AccessModeWrite)
	defer s.Close(ctx)
	res, err := s.Run(ctx, "EXPLAIN "+stmt, params)
	if err != nil {
		return nil, err
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return nil, err
	}
	if sum.Plan() == nil {
		return nil, errors.New("no plan")
	}
	return sum.Plan(), nil
}
