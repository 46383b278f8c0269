package neo4j

import (
	"context"
	"sync"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Profile collects the execution profile of every statement that the
// store's transactions run under a context made by WithProfile: each
// statement runs prefixed with PROFILE (it executes as it would, writes
// included, and Neo4j reports the operators it ran, their rows and db
// hits). It is a diagnostic for tests and tools that ask where an
// operation's work goes (docs/BENCHMARKS.md, "Revisions"); a context without
// one costs a context lookup per statement.
type Profile struct {
	mu         sync.Mutex
	statements []ProfiledStatement
}

// ProfiledStatement is one statement as it ran: its text (without the
// PROFILE prefix), its parameters, Neo4j's profiled plan and what it
// wrote.
type ProfiledStatement struct {
	Text     string
	Params   map[string]any
	Plan     neo4j.ProfiledPlan
	Counters neo4j.Counters
}

// Statements returns the statements profiled so far, in the order they
// ran.
func (p *Profile) Statements() []ProfiledStatement {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProfiledStatement(nil), p.statements...)
}

// Reset forgets the statements profiled so far.
func (p *Profile) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statements = nil
}

type profileKey struct{}

// WithProfile returns ctx with p collecting the profile of every statement
// run under it.
func WithProfile(ctx context.Context, p *Profile) context.Context {
	return context.WithValue(ctx, profileKey{}, p)
}

// runner runs a statement: a managed transaction, or an autoCommit.
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// profiled runs stmt in tx and hands its result to rows; under a Profile
// (WithProfile) it runs it with PROFILE and records the summary once rows
// has read what it needs (the rest of the result is discarded).
func profiled[T any](ctx context.Context, tx runner, stmt string, params map[string]any, rows func(neo4j.ResultWithContext) (T, error)) (T, error) {
	p, _ := ctx.Value(profileKey{}).(*Profile)
	if p == nil {
		res, err := tx.Run(ctx, stmt, params)
		if err != nil {
			var zero T
			return zero, err
		}
		return rows(res)
	}
	res, err := tx.Run(ctx, "PROFILE "+stmt, params)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := rows(res)
	if err != nil {
		return out, err
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return out, err
	}
	p.mu.Lock()
	p.statements = append(p.statements, ProfiledStatement{Text: stmt, Params: params, Plan: sum.Profile(), Counters: sum.Counters()})
	p.mu.Unlock()
	return out, nil
}
