package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// unannounced marks a write transaction's context: AfterWrite is not
// called for it.
type unannounced struct{}

// FeedHead returns the change feed's last sequence number and whether
// committed audit entries await one.
func (db *DB) FeedHead(ctx context.Context) (membrane.FeedHead, error) {
	h, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (membrane.FeedHead, error) {
		row, err := single(ctx, tx, cypher.Must("event_head"), nil)
		if err != nil || row == nil {
			return membrane.FeedHead{}, err
		}
		pending, _ := row.Values[1].(bool)
		return membrane.FeedHead{Seq: integer(row.Values[0]), Pending: pending}, nil
	})
	if err != nil {
		return h, fmt.Errorf("feed head: %w", err)
	}
	return h, nil
}

// SequenceEvents numbers up to batch committed audit entries in one write
// transaction under the sequencer's lock.
func (db *DB) SequenceEvents(ctx context.Context, holder string, batch int) (int, int64, error) {
	type result struct {
		n    int
		head int64
	}
	// Numbering is the feed's own write: announcing it would only wake
	// the feed for a round with nothing to number.
	ctx = context.WithValue(ctx, unannounced{}, true)
	r, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		row, err := single(ctx, tx, cypher.Must("event_lock"), map[string]any{"holder": holder, "now": db.Now().UTC()})
		if err != nil {
			return result{}, err
		}
		head := integer(row.Values[0])
		row, err = single(ctx, tx, cypher.Must("event_sequence"), map[string]any{"batch": int64(batch)})
		if err != nil || row == nil {
			return result{head: head}, err
		}
		return result{n: int(integer(row.Values[0])), head: integer(row.Values[1])}, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sequence events: %w", err)
	}
	return r.n, r.head, nil
}

// Events returns the change-feed events q selects, gated by the request's
// trust: entries of records it sees in full as they are, entries of
// records it sees redacted (only with q.WithRecords) without their free
// text, nothing else.
func (db *DB) Events(ctx context.Context, q membrane.EventQuery) (membrane.EventBatch, error) {
	redacted := int64(0)
	if q.WithRecords {
		redacted = 1
	}
	params := gated(ctx, map[string]any{
		"after": q.After, "upTo": q.UpTo, "limit": int64(q.Limit), "redacted": redacted, "withRecords": q.WithRecords,
		"ids": listOrNil(q.Filter.RecordIDs), "types": listOrNil(q.Filter.Types), "scopes": listOrNil(q.Filter.Scopes),
		"actions": listOrNil(q.Filter.Actions), "actors": listOrNil(q.Filter.Actors),
	})
	t := membrane.TrustFromContext(ctx)
	b, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (membrane.EventBatch, error) {
		rows, err := collect(ctx, tx, cypher.Must("events"), params)
		if err != nil {
			return membrane.EventBatch{}, err
		}
		b := membrane.EventBatch{Events: make([]*membrane.Event, 0, len(rows)), Next: q.UpTo}
		for _, row := range rows {
			props, _ := row.Values[0].(map[string]any)
			if len(rows) == q.Limit {
				b.Next = integer(props["seq"])
			}
			vis := t.VisibilityOf(int(integer(props["sensitivityLevel"])), str(props["scope"]))
			if vis == membrane.Invisible || vis == membrane.Redacted && !q.WithRecords {
				continue // the statement's gate already left these out; this is the last word
			}
			a, err := db.readAudit(props)
			if err != nil {
				return membrane.EventBatch{}, err
			}
			_, scoped := props["scope"]
			e := &membrane.Event{Seq: integer(props["seq"]), Entry: a, Redacted: vis == membrane.Redacted,
				Gate: membrane.EventGate{Level: int(integer(props["sensitivityLevel"])), Scope: str(props["scope"]), Unscoped: !scoped,
					RecordType: membrane.MemoryType(str(props["recordType"]))}}
			if e.Redacted {
				e.Entry = membrane.RedactEntry(a)
			}
			if rp, ok := row.Values[1].(map[string]any); ok {
				r, err := db.readRecord(rp)
				if err != nil {
					return membrane.EventBatch{}, err
				}
				e.Record = view(ctx, r)
			}
			b.Events = append(b.Events, e)
		}
		var full []*membrane.AuditEntry
		for _, e := range b.Events {
			if !e.Redacted {
				full = append(full, e.Entry)
			}
		}
		if err := refsNow(ctx, tx, full); err != nil {
			return membrane.EventBatch{}, err
		}
		for _, e := range b.Events {
			if !e.Redacted {
				e.Entry = t.GateEntry(e.Entry)
			}
		}
		return b, nil
	})
	if err != nil {
		return b, fmt.Errorf("read events: %w", err)
	}
	return b, nil
}

// listOrNil turns an empty filter list into a null parameter ("any").
func listOrNil[S ~string](vs []S) any {
	if len(vs) == 0 {
		return nil
	}
	return stringsOf(vs)
}
