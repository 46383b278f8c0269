package neo4j

import (
	"context"
	"fmt"
	"strings"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// auditField names the audit listing in its cursors.
const auditField = "audit"

// auditOrders fill the audit statements' __DIR__ and __AFTER__ by order:
// the direction of (at, id) and the keyset comparison past a cursor.
var auditOrders = map[membrane.AuditOrder]*strings.Replacer{
	membrane.AuditOldestFirst: strings.NewReplacer("__DIR__", "ASC", "__AFTER__", ">"),
	membrane.AuditNewestFirst: strings.NewReplacer("__DIR__", "DESC", "__AFTER__", "<"),
}

// auditStatements are the audit statements by template and order.
var auditStatements = func() map[string]map[membrane.AuditOrder]string {
	out := map[string]map[membrane.AuditOrder]string{}
	for _, name := range []string{"audit_page", "audit_for_records"} {
		out[name] = map[membrane.AuditOrder]string{}
		for o, r := range auditOrders {
			out[name][o] = r.Replace(cypher.Must(name))
		}
	}
	return out
}()

// auditStatement is template name filled for order ("": oldest first).
func auditStatement(name string, order membrane.AuditOrder) (string, error) {
	if order == "" {
		order = membrane.AuditOldestFirst
	}
	stmt, ok := auditStatements[name][order]
	if !ok {
		return "", membrane.Errorf(membrane.EINVALID, "order must be OLDEST_FIRST or NEWEST_FIRST")
	}
	return stmt, nil
}

// auditAfter returns the (at, id) keyset position of an audit cursor.
func auditAfter(c *membrane.Cursor) (any, any, error) {
	if c == nil {
		return nil, nil, nil
	}
	t, ok := c.TimeKey(auditField)
	if !ok {
		return nil, nil, membrane.Errorf(membrane.EINVALID, "after is not an audit cursor")
	}
	return t, c.ID, nil
}

func auditCursor(a *membrane.AuditEntry) membrane.Cursor {
	return membrane.TimeCursor(auditField, a.Timestamp, a.ID)
}

// FindAuditEntries returns a page of audit entries matching filter, in
// f.Order, each with only the references the request's trust may see.
func (db *DB) FindAuditEntries(ctx context.Context, f membrane.AuditFilter, page membrane.Page) (*membrane.AuditPage, error) {
	stmt, err := auditStatement("audit_page", f.Order)
	if err != nil {
		return nil, err
	}
	afterAt, afterID, err := auditAfter(page.After)
	if err != nil {
		return nil, err
	}
	params := gated(ctx, map[string]any{
		"recordId": nil, "actor": nil, "action": nil, "since": nil, "until": nil,
		"afterAt": afterAt, "afterId": afterID, "limit": int64(page.First + 1),
	})
	if f.RecordID != nil {
		params["recordId"] = *f.RecordID
	}
	if f.Actor != nil {
		params["actor"] = *f.Actor
	}
	if f.Action != nil {
		params["action"] = string(*f.Action)
	}
	if f.Since != nil {
		params["since"] = f.Since.UTC()
	}
	if f.Until != nil {
		params["until"] = f.Until.UTC()
	}
	t := membrane.TrustFromContext(ctx)
	entries, err := read(ctx, db, func(tx neo4j.ManagedTransaction) ([]*membrane.AuditEntry, error) {
		rows, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		out := make([]*membrane.AuditEntry, 0, len(rows))
		for _, row := range rows {
			props, _ := row.Values[0].(map[string]any)
			a, err := db.readAudit(props)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		if err := refsNow(ctx, tx, out); err != nil {
			return nil, err
		}
		for i, a := range out {
			out[i] = t.GateEntry(a)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("find audit entries: %w", err)
	}
	return membrane.NewPageOf(entries, page.First, auditCursor), nil
}

// AuditPagesForRecords returns one audit page per record id (in order,
// oldest first by default), all read in one round trip.
func (db *DB) AuditPagesForRecords(ctx context.Context, ids []string, order membrane.AuditOrder, page membrane.Page) (map[string]*membrane.AuditPage, error) {
	stmt, err := auditStatement("audit_for_records", order)
	if err != nil {
		return nil, err
	}
	afterAt, afterID, err := auditAfter(page.After)
	if err != nil {
		return nil, err
	}
	params := gated(ctx, map[string]any{"ids": ids, "afterAt": afterAt, "afterId": afterID, "limit": int64(page.First + 1)})
	t := membrane.TrustFromContext(ctx)
	byID, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (map[string][]*membrane.AuditEntry, error) {
		rows, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		out := make(map[string][]*membrane.AuditEntry, len(rows))
		var all []*membrane.AuditEntry
		for _, row := range rows {
			id, _ := row.Values[0].(string)
			list, _ := row.Values[1].([]any)
			for _, e := range list {
				props, _ := e.(map[string]any)
				a, err := db.readAudit(props)
				if err != nil {
					return nil, err
				}
				out[id] = append(out[id], a)
				all = append(all, a)
			}
		}
		if err := refsNow(ctx, tx, all); err != nil {
			return nil, err
		}
		for _, list := range out {
			for i, a := range list {
				list[i] = t.GateEntry(a)
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit of %d records: %w", len(ids), err)
	}
	pages := make(map[string]*membrane.AuditPage, len(ids))
	for _, id := range ids {
		pages[id] = membrane.NewPageOf(byID[id], page.First, auditCursor)
	}
	return pages, nil
}
