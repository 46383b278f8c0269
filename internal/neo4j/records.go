package neo4j

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.RecordStore = (*DB)(nil)

// Statements with placeholders, filled once from fixed values at start-up.
// A records statement comes in variants. When the filter names scopes,
// the scope predicate is plain (m.scope IN $scopes), so Neo4j seeks the
// scope index and a page costs what that scope holds; otherwise it walks the
// ordering index. With "$scopes IS NULL OR …" in one statement the planner
// can never seek, and a scope's page would cost every newer record of
// every other scope. With a text filter, the statement starts from the
// full-text matches instead (records_match_text).
type variant struct {
	order  membrane.RecordOrder
	scoped bool
	text   bool
}

// countVariant selects a count statement: scoped, text.
type countVariant struct{ scoped, text bool }

var (
	recordsCount   = countStatements("records_count", "m")
	recordsCountAt = countStatements("records_count_as_of", "v")
	recordsPage    = pageStatements("records_page", "m")
	recordsPageAt  = pageStatements("records_page_as_of", "v")
	// recordsPageScoped is the page of records of given scopes ordered by
	// creation time, by direction (descending): it walks each scope's
	// records in order and stops at the page (records_page_scoped), where
	// records_page would sort every record of the scopes.
	recordsPageScoped = func() map[bool]string {
		tmpl := filled("records_page_scoped", "m", true, false)
		out := map[bool]string{}
		for _, desc := range []bool{false, true} {
			dir, cmp := "ASC", ">"
			if desc {
				dir, cmp = "DESC", "<"
			}
			out[desc] = strings.NewReplacer("__DIR__", dir, "__CMP__", cmp).Replace(tmpl)
		}
		return out
	}()
)

// Bounds of recordsPageScoped's walk when nothing narrows it: before and
// after every record's creation time.
var (
	beginningOfTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	endOfTime       = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// scopedPageRange is the range of creation times recordsPageScoped walks,
// both ends inclusive: the filter's window (createdAfter, createdBefore)
// narrowed by the cursor's instant (after) on the side the walk starts
// from. Both ends bound the index seek, so that a window or a cursor deep
// in a scope costs a page, not the records outside it (the statement's
// filters still drop those at an end that the filter excludes: the
// window's end is exclusive, the cursor's instant holds its ties).
func scopedPageRange(desc bool, after, createdAfter, createdBefore *time.Time) (lower, upper time.Time) {
	lower, upper = beginningOfTime, endOfTime
	if createdAfter != nil {
		lower = createdAfter.UTC()
	}
	if createdBefore != nil {
		upper = createdBefore.UTC()
	}
	if after != nil {
		if desc && after.Before(upper) {
			upper = after.UTC()
		}
		if !desc && after.After(lower) {
			lower = after.UTC()
		}
	}
	return lower, upper
}

// filled returns a records statement with its filter fragments in place;
// state filters (status, salience) apply to v, the record as of the
// instant asked about, or m, the record as it is.
func filled(name, v string, scoped, text bool) string {
	scopes := "true"
	if scoped {
		scopes = "m.scope IN $scopes"
	}
	match := cypher.Must("records_match_all")
	if text {
		match = cypher.Must("records_match_text")
	}
	return strings.NewReplacer(
		"__MATCH__", match,
		"__FILTER__", strings.ReplaceAll(cypher.Must("record_filter"), "__SCOPES__", scopes),
		"__STATE_FILTER__", strings.ReplaceAll(cypher.Must("record_state_filter"), "__V__", v),
		"__AS_OF__", asOfFragment,
	).Replace(cypher.Must(name))
}

// countStatements builds the count statement of every variant.
func countStatements(name, v string) map[countVariant]string {
	out := map[countVariant]string{}
	for _, scoped := range []bool{false, true} {
		for _, text := range []bool{false, true} {
			out[countVariant{scoped, text}] = filled(name, v, scoped, text)
		}
	}
	return out
}

// pageStatements builds the keyset page statement for every order field and
// direction. Field names come from this fixed map, never from a request.
func pageStatements(name, v string) map[variant]string {
	fields := map[membrane.RecordOrderField]string{
		membrane.OrderCreatedAt:  "createdAt",
		membrane.OrderUpdatedAt:  "updatedAt",
		membrane.OrderSalience:   "salience",
		membrane.OrderConfidence: "confidence",
	}
	out := map[variant]string{}
	for _, scoped := range []bool{false, true} {
		for _, text := range []bool{false, true} {
			tmpl := filled(name, v, scoped, text)
			for f, prop := range fields {
				for _, desc := range []bool{false, true} {
					dir, cmp := "ASC", ">"
					if desc {
						dir, cmp = "DESC", "<"
					}
					out[variant{membrane.RecordOrder{Field: f, Descending: desc}, scoped, text}] = strings.NewReplacer(
						"__FIELD__", prop, "__DIR__", dir, "__CMP__", cmp).Replace(tmpl)
				}
			}
		}
	}
	return out
}

// CreateRecords writes records and their create audit entries in one
// transaction with one UNWIND statement. With idem, a repeated request
// returns the records the first one created.
func (db *DB) CreateRecords(ctx context.Context, idem *membrane.Idempotency, recs []*membrane.Ingested) ([]*membrane.Record, error) {
	rows, err := db.createRows(recs)
	if err != nil {
		return nil, err
	}
	out, err := db.idempotent(ctx, idem, func(tx neo4j.ManagedTransaction) (*written, error) {
		row, err := single(ctx, tx, cypher.Must("create_records"), map[string]any{"records": rows})
		if err != nil {
			return nil, err
		}
		if err := checkReused(row); err != nil {
			return nil, err
		}
		created := make([]*membrane.Record, len(recs))
		for i, in := range recs {
			created[i] = in.Record
		}
		if err := db.linkSessions(ctx, tx, created); err != nil {
			return nil, err
		}
		if err := db.linkMentions(ctx, tx, created); err != nil {
			return nil, err
		}
		return &written{recs: created}, db.writePlanSteps(ctx, tx, created)
	})
	if err != nil {
		return nil, fmt.Errorf("create %d records: %w", len(recs), err)
	}
	return out.recs, nil
}

// createRows returns the $records rows of create_records.cypher for recs.
func (db *DB) createRows(recs []*membrane.Ingested) ([]map[string]any, error) {
	rows := make([]map[string]any, len(recs))
	for i, in := range recs {
		props, err := db.recordProps(in.Record)
		if err != nil {
			return nil, err
		}
		audit, err := db.auditProps(in.Audit, in.Record.Sensitivity)
		if err != nil {
			return nil, err
		}
		rows[i] = map[string]any{"id": in.Record.ID, "label": in.Record.Type.Label(), "props": props, "audit": audit,
			"vector": nil, "model": in.EmbeddingModel}
		if in.Embedding != nil {
			rows[i]["vector"] = in.Embedding
		}
	}
	return rows, nil
}

// FindRecordByID returns the record with id, or ENOTFOUND, in one round
// trip (readOnce).
func (db *DB) FindRecordByID(ctx context.Context, id string) (*membrane.Record, error) {
	r, err := readOnce(ctx, db, func(tx runner) (*membrane.Record, error) {
		row, err := single(ctx, tx, cypher.Must("record_by_id"), gated(ctx, map[string]any{"id": id}))
		if err != nil || row == nil {
			return nil, err
		}
		props, _ := row.Values[0].(map[string]any)
		return db.readRecord(props)
	})
	if err != nil {
		return nil, err
	}
	if r == nil || view(ctx, r) == nil {
		return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
	}
	return view(ctx, r), nil
}

// filterParams returns the gated parameters of record_filter.cypher (and
// of records_match_text); nil means "do not filter on this".
func (db *DB) filterParams(ctx context.Context, f membrane.RecordFilter) map[string]any {
	p := map[string]any{
		"types": nil, "scopes": nil, "levels": nil, "statuses": nil, "tags": nil,
		"minSalience": nil, "maxSalience": nil, "createdAfter": nil, "createdBefore": nil, "asOf": nil,
		"lucene": nil, "blindLucene": nil, "textMatches": nil,
	}
	if len(f.TextTerms) > 0 {
		// The same builders as retrieve's, so both search alike: sealed
		// records by their blind terms, for requests cleared for them,
		// and only in the scopes the request searches, so that another
		// scope's matches never count towards the bound.
		scopes, scoped := searchScopes(ctx, nilIfEmpty(f.Scopes))
		q := membrane.RetrieveQuery{Terms: f.TextTerms}
		p["lucene"] = textLucene(q.Terms, scopes, scoped)
		p["blindLucene"] = db.blindLucene(ctx, q, scopes, scoped)
		p["textMatches"] = int64(membrane.MaxTextMatches)
		if db.textMatches > 0 {
			p["textMatches"] = int64(db.textMatches)
		}
	}
	if f.AsOf != nil {
		p["asOf"] = f.AsOf.UTC()
	}
	if len(f.Types) > 0 {
		p["types"] = stringsOf(f.Types)
	}
	if len(f.Scopes) > 0 {
		p["scopes"] = f.Scopes
	}
	if len(f.Sensitivities) > 0 {
		levels := make([]int64, len(f.Sensitivities))
		for i, s := range f.Sensitivities {
			levels[i] = int64(s.Level())
		}
		p["levels"] = levels
	}
	if len(f.Statuses) > 0 {
		p["statuses"] = stringsOf(f.Statuses)
	}
	if len(f.Tags) > 0 {
		p["tags"] = f.Tags
	}
	if f.MinSalience != nil {
		p["minSalience"] = *f.MinSalience
	}
	if f.MaxSalience != nil {
		p["maxSalience"] = *f.MaxSalience
	}
	if f.CreatedAfter != nil {
		p["createdAfter"] = f.CreatedAfter.UTC()
	}
	if f.CreatedBefore != nil {
		p["createdBefore"] = f.CreatedBefore.UTC()
	}
	return gated(ctx, p)
}

// nilIfEmpty is s, or nil (no filter) when s is empty, as the records
// filter reads an empty scopes list.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// textUnmatchable reports a text filter that can match nothing: only stop
// words, or a scopes filter naming none of the scopes the request sees
// (the index query would then name no scope at all).
func textUnmatchable(ctx context.Context, f membrane.RecordFilter) bool {
	if f.Unmatchable() {
		return true
	}
	if len(f.TextTerms) == 0 {
		return false
	}
	scopes, scoped := searchScopes(ctx, nilIfEmpty(f.Scopes))
	return scoped && len(scopes) == 0
}

func stringsOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// FindRecords returns one keyset page of records matching filter. It reads
// one row past the page to learn whether another page follows.
func (db *DB) FindRecords(ctx context.Context, f membrane.RecordFilter, order membrane.RecordOrder, page membrane.Page) (*membrane.RecordPage, error) {
	pages := recordsPage
	if f.AsOf != nil {
		pages = recordsPageAt
	}
	stmt, ok := pages[variant{order, len(f.Scopes) > 0, len(f.TextTerms) > 0}]
	if !ok {
		return nil, membrane.Errorf(membrane.EINVALID, "cannot order by %q", order.Field)
	}
	if textUnmatchable(ctx, f) {
		// Only stop words, or no scope to search: the text matches
		// nothing (never every record).
		return &membrane.RecordPage{Items: []*membrane.Record{}, Cursors: []string{}}, nil
	}
	params := db.filterParams(ctx, f)
	params["afterKey"], params["afterId"] = nil, nil
	if c := page.After; c != nil {
		key, err := cursorKey(c, order.Field)
		if err != nil {
			return nil, err
		}
		params["afterKey"], params["afterId"] = key, c.ID
	}
	params["limit"] = int64(page.First + 1)
	if f.AsOf == nil && len(f.Scopes) > 0 && len(f.TextTerms) == 0 && order.Field == membrane.OrderCreatedAt {
		stmt = recordsPageScoped[order.Descending]
		var after *time.Time
		if t, ok := params["afterKey"].(time.Time); ok {
			after = &t
		}
		params["lower"], params["upper"] = scopedPageRange(order.Descending, after, f.CreatedAfter, f.CreatedBefore)
	}
	recs, err := read(ctx, db, func(tx neo4j.ManagedTransaction) ([]*membrane.Record, error) {
		rows, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, err
		}
		return db.visibleRows(ctx, rows, f.AsOf)
	})
	if err != nil {
		return nil, fmt.Errorf("find records: %w", err)
	}
	return membrane.NewPageOf(recs, page.First, func(r *membrane.Record) membrane.Cursor {
		return recordCursor(r, order.Field)
	}), nil
}

func recordCursor(r *membrane.Record, f membrane.RecordOrderField) membrane.Cursor {
	switch f {
	case membrane.OrderCreatedAt:
		return membrane.TimeCursor(string(f), r.CreatedAt, r.ID)
	case membrane.OrderUpdatedAt:
		return membrane.TimeCursor(string(f), r.UpdatedAt, r.ID)
	case membrane.OrderSalience:
		return membrane.Cursor{Key: r.Salience, ID: r.ID, Field: string(f)}
	case membrane.OrderConfidence:
		return membrane.Cursor{Key: r.Confidence, ID: r.ID, Field: string(f)}
	}
	return membrane.Cursor{ID: r.ID, Field: string(f)}
}

// cursorKey turns a decoded cursor's key back into the Neo4j value to
// compare with, rejecting cursors of another ordering.
func cursorKey(c *membrane.Cursor, f membrane.RecordOrderField) (any, error) {
	bad := membrane.Errorf(membrane.EINVALID, "after is a cursor of another ordering or query")
	if c.Field != string(f) {
		return nil, bad
	}
	if f.IsTime() {
		t, ok := c.TimeKey(string(f))
		if !ok {
			return nil, bad
		}
		return t, nil
	}
	n, ok := c.Key.(float64)
	if !ok {
		return nil, bad
	}
	return n, nil
}

// CountRecords counts the records matching filter.
func (db *DB) CountRecords(ctx context.Context, f membrane.RecordFilter) (int64, error) {
	if textUnmatchable(ctx, f) {
		return 0, nil
	}
	n, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (int64, error) {
		key := countVariant{len(f.Scopes) > 0, len(f.TextTerms) > 0}
		stmt := recordsCount[key]
		if f.AsOf != nil {
			stmt = recordsCountAt[key]
		}
		row, err := single(ctx, tx, stmt, db.filterParams(ctx, f))
		if err != nil || row == nil {
			return 0, err
		}
		n, _ := row.Values[0].(int64)
		return n, nil
	})
	if err != nil {
		return 0, fmt.Errorf("count records: %w", err)
	}
	return n, nil
}

// LocateRecords returns the level and scope of each of ids that names a
// record or a deleted one, in one round trip (record_locations).
func (db *DB) LocateRecords(ctx context.Context, ids []string) (map[string]membrane.RecordLocation, error) {
	out := map[string]membrane.RecordLocation{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := read(ctx, db, func(tx neo4j.ManagedTransaction) ([]*neo4j.Record, error) {
		return collect(ctx, tx, cypher.Must("record_locations"), map[string]any{"ids": ids})
	})
	if err != nil {
		return nil, fmt.Errorf("locate records: %w", err)
	}
	for _, row := range rows {
		l := membrane.RecordLocation{Level: membrane.UnknownLevel, Scope: str(row.Values[2])}
		if row.Values[1] != nil {
			l.Level = int(integer(row.Values[1]))
		}
		out[str(row.Values[0])] = l
	}
	return out, nil
}
