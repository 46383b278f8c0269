package main

import (
	"context"
	"fmt"
	"time"

	pb "github.com/BennettSchwartz/membrane/api/grpc/gen/membranev1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/membrane/membrane/internal/bench"
)

// trust is the reads' trust context: the reference takes it from the
// request (it has no principals), so the bench asks for everything.
var trust = &pb.TrustContext{MaxSensitivity: "hyper", Authenticated: true, ActorId: "bench"}

// fact captures an observation about subject in scope and returns the id
// of the semantic record the reference derives from it (a capture also
// writes an episodic record and the subject's entity).
func (c *client) fact(ctx context.Context, scope, subject string) (string, error) {
	content, err := structpb.NewValue(map[string]any{"subject": subject, "predicate": "runs_on", "object": "node " + subject})
	if err != nil {
		return "", err
	}
	out, err := c.svc.CaptureMemory(c.ctx(ctx), &pb.CaptureMemoryRequest{Source: "bench", SourceKind: "observation", Content: content, Scope: scope})
	if err != nil {
		return "", err
	}
	for _, r := range out.CreatedRecords {
		if r.Type == "semantic" {
			return r.Id, nil
		}
	}
	return "", fmt.Errorf("capturing an observation about %q created no semantic record", subject)
}

// facts captures n facts in scope and returns their ids.
func (c *client) facts(ctx context.Context, scope, prefix string, n int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		id, err := c.fact(ctx, scope, fmt.Sprint(prefix, i))
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// record is a semantic record about subject, as a revision's new record,
// with the evidence the reference asks of a semantic revision.
func record(scope, subject string) *pb.MemoryRecord {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	return &pb.MemoryRecord{Type: "semantic", Sensitivity: "low", Confidence: 0.9, Salience: 1, Scope: scope,
		CreatedAt: now, UpdatedAt: now,
		Lifecycle: &pb.Lifecycle{Decay: &pb.DecayProfile{Curve: "exponential", HalfLifeSeconds: 2592000},
			LastReinforcedAt: now, DeletionPolicy: "auto_prune"},
		Payload: &pb.Payload{Kind: &pb.Payload_Semantic{Semantic: &pb.SemanticPayload{Kind: "semantic",
			Subject: subject, Predicate: "runs_on", Object: structpb.NewStringValue("node " + subject),
			Validity: &pb.Validity{Mode: "global"},
			Evidence: []*pb.ProvenanceRef{{SourceType: "bench", SourceId: "bench", Timestamp: now}}}}}}
}

// supersedes is the record that r supersedes, if any.
func supersedes(r *pb.MemoryRecord) string {
	for _, rel := range r.Relations {
		if rel.Predicate == "supersedes" {
			return rel.TargetId
		}
	}
	return ""
}

type op = func(context.Context, int) error

// workloads are cmd/bench's workloads that the reference can run, by the
// same names and clients, each as close to cmd/bench's as its API allows.
func workloads() []bench.Workload[*client] {
	pointRead := func(ctx context.Context, c *client, cfg bench.Config, _ int) (op, error) {
		id, err := c.fact(ctx, cfg.Scope, "read")
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, _ int) error {
			_, err := c.svc.RetrieveByID(c.ctx(ctx), &pb.RetrieveByIDRequest{Id: id, Trust: trust})
			return err
		}, nil
	}
	// Each revision revises a distinct fact of a pool written before the
	// timer starts, as in cmd/bench.
	revise := func(prefix string, run func(ctx context.Context, c *client, id string, cfg bench.Config, i int) error) func(context.Context, *client, bench.Config, int) (op, error) {
		return func(ctx context.Context, c *client, cfg bench.Config, n int) (op, error) {
			pool, err := c.facts(ctx, cfg.Scope, prefix, n)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, i int) error { return run(ctx, c, pool[i], cfg, i) }, nil
		}
	}
	// The reference's contesting reference must be a record (its relation
	// needs a target), where cmd/bench names an external ticket.
	contest := func(ctx context.Context, c *client, cfg bench.Config, n int) (op, error) {
		ref, err := c.fact(ctx, cfg.Scope, "contesting")
		if err != nil {
			return nil, err
		}
		return revise("contested-", func(ctx context.Context, c *client, id string, _ bench.Config, _ int) error {
			_, err := c.svc.Contest(c.ctx(ctx), &pb.ContestRequest{Id: id, ContestingRef: ref, Actor: "bench"})
			return err
		})(ctx, c, cfg, n)
	}
	fork := revise("forked-", func(ctx context.Context, c *client, id string, cfg bench.Config, i int) error {
		_, err := c.svc.Fork(c.ctx(ctx), &pb.ForkRequest{SourceId: id, ForkedRecord: record(cfg.Scope, fmt.Sprint("fork-", i)), Actor: "bench"})
		return err
	})
	supersede := revise("superseded-", func(ctx context.Context, c *client, id string, cfg bench.Config, i int) error {
		_, err := c.svc.Supersede(c.ctx(ctx), &pb.SupersedeRequest{OldId: id, NewRecord: record(cfg.Scope, fmt.Sprint("successor-", i)), Actor: "bench"})
		return err
	})
	// A chain: each supersede revises the head the one before wrote.
	extend := func(ctx context.Context, c *client, head, scope, subject string) (string, error) {
		out, err := c.svc.Supersede(c.ctx(ctx), &pb.SupersedeRequest{OldId: head, NewRecord: record(scope, subject), Actor: "bench"})
		if err != nil {
			return "", err
		}
		return out.GetRecord().GetId(), nil
	}
	chain := func(ctx context.Context, c *client, cfg bench.Config, _ int) (op, error) {
		head, err := c.fact(ctx, cfg.Scope, "chain")
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) error {
			next, err := extend(ctx, c, head, cfg.Scope, fmt.Sprint("chain-", i))
			head = next
			return err
		}, nil
	}
	lineage := func(ctx context.Context, c *client, cfg bench.Config, _ int) (op, error) {
		head, err := c.fact(ctx, cfg.Scope, "deep")
		if err != nil {
			return nil, err
		}
		for i := range 100 {
			if head, err = extend(ctx, c, head, cfg.Scope, fmt.Sprint("deep-", i)); err != nil {
				return nil, err
			}
		}
		return func(ctx context.Context, _ int) error {
			n := 0
			for id := head; id != ""; n++ {
				out, err := c.svc.RetrieveByID(c.ctx(ctx), &pb.RetrieveByIDRequest{Id: id, Trust: trust})
				if err != nil {
					return err
				}
				id = supersedes(out.GetRecord())
			}
			if n != 101 {
				return fmt.Errorf("lineage of %d records, want 101", n)
			}
			return nil
		}, nil
	}
	// Every capture names a project of its own, as in cmd/bench.
	capture := func(_ context.Context, c *client, cfg bench.Config, _ int) (op, error) {
		run := time.Now().UnixNano()
		return func(ctx context.Context, i int) error {
			content, err := structpb.NewValue(map[string]any{"project": map[string]any{"name": fmt.Sprintf("project-%d-%d", run, i)},
				"note": fmt.Sprint("postgres connection pool after the deploy of service-", i%97)})
			if err != nil {
				return err
			}
			out, err := c.svc.CaptureMemory(c.ctx(ctx), &pb.CaptureMemoryRequest{Source: "bench", SourceKind: "event", Content: content, Scope: cfg.Scope})
			if err == nil && len(out.CreatedRecords) == 0 {
				err = fmt.Errorf("a capture naming a project created no entity")
			}
			return err
		}, nil
	}
	prepares := map[string]func(context.Context, *client, bench.Config, int) (op, error){
		"point read": pointRead, "contest": contest, "fork": fork, "supersede chain": chain, "supersede": supersede,
		"lineage 100-deep": lineage, "captureMemory": capture,
	}
	// cmd/bench's workloads, in its order and with its clients, that the
	// reference can run (the cold point read needs a server just started).
	var ws []bench.Workload[*client]
	for _, w := range bench.Workloads() {
		if p, ok := prepares[w.Name]; ok && !w.Cold {
			ws = append(ws, bench.Workload[*client]{Name: w.Name, Clients: w.Clients, Prepare: p})
		}
	}
	return ws
}
