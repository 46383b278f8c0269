package membrane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"time"
)

// RecordFilter narrows a record listing. Empty fields do not filter.
type RecordFilter struct {
	Types         []MemoryType
	Scopes        []string
	Sensitivities []Sensitivity
	// Tags must all be present on a record (all-of).
	Tags []string
	// Text, when not empty, keeps only records matching it through the
	// full-text index, as retrieve's query matches them (any of its terms);
	// TextTerms are its search terms, set by Validate.
	Text          string
	TextTerms     []string
	MinSalience   *float64
	MaxSalience   *float64
	Statuses      []RevisionStatus
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// AsOf, when set, asks for records as they were at that instant: those
	// created since are left out, and status and salience are matched (and
	// returned) as they were then.
	AsOf *time.Time
}

// Validate checks the filter's ranges and enums, and sets TextTerms from
// Text.
func (f *RecordFilter) Validate() error {
	v := &validator{prefix: "filter."}
	f.Text, f.TextTerms = searchText(v, "text", f.Text)
	for _, t := range f.Types {
		if !t.Valid() {
			v.add("types", "unknown memory type %q", t)
		}
	}
	for _, s := range f.Sensitivities {
		if !s.Valid() {
			v.add("sensitivities", "unknown sensitivity %q", s)
		}
	}
	for _, s := range f.Statuses {
		if !s.Valid() {
			v.add("statuses", "unknown status %q", s)
		}
	}
	v.tags("tags", f.Tags)
	v.strs("scopes", f.Scopes)
	for _, m := range []*float64{f.MinSalience, f.MaxSalience} {
		if m != nil && (math.IsNaN(*m) || math.IsInf(*m, 0)) {
			v.add("salience", "bounds must be finite numbers")
		}
	}
	if f.MinSalience != nil && f.MaxSalience != nil && *f.MinSalience > *f.MaxSalience {
		v.add("maxSalience", "must be >= minSalience")
	}
	if f.CreatedAfter != nil && f.CreatedBefore != nil && f.CreatedBefore.Before(*f.CreatedAfter) {
		v.add("createdBefore", "must not be before createdAfter")
	}
	return v.err()
}

// MaxTextMatches bounds the full-text matches a records text filter reads
// (the best ones, in the scopes the request searches): a listing by text
// costs at most this many matches however many records share its words.
// A text shared by more records lists and counts the best MaxTextMatches.
const MaxTextMatches = 10_000

// Unmatchable reports a text filter without search terms (only stop words,
// or a filter never validated): it matches no record.
func (f RecordFilter) Unmatchable() bool { return f.Text != "" && len(f.TextTerms) == 0 }

// RecordOrderField is a field records can be ordered by. Each has a range
// index, so a keyset page is an index seek.
type RecordOrderField string

// Orderable fields.
const (
	OrderCreatedAt  RecordOrderField = "createdAt"
	OrderUpdatedAt  RecordOrderField = "updatedAt"
	OrderSalience   RecordOrderField = "salience"
	OrderConfidence RecordOrderField = "confidence"
)

var recordOrderFields = enum[RecordOrderField]{OrderCreatedAt, OrderUpdatedAt, OrderSalience, OrderConfidence}

// Valid reports whether f is orderable.
func (f RecordOrderField) Valid() bool { return recordOrderFields.has(f) }

// IsTime reports whether the field holds a timestamp.
func (f RecordOrderField) IsTime() bool { return f == OrderCreatedAt || f == OrderUpdatedAt }

// RecordOrder orders a record listing; ties break on id in the same direction.
type RecordOrder struct {
	Field      RecordOrderField
	Descending bool
}

// DefaultRecordOrder is newest first.
var DefaultRecordOrder = RecordOrder{Field: OrderCreatedAt, Descending: true}

// Page asks for up to First items after an opaque cursor.
type Page struct {
	First int
	After *Cursor
}

// NewPage validates first and decodes after into a Page.
func NewPage(first *int64, after *string) (Page, error) {
	p := Page{First: DefaultPageSize}
	if first != nil {
		if *first < 0 || *first > MaxPageSize {
			return p, &Error{Code: EINVALID, Message: "first must be between 0 and 500",
				Fields: []FieldError{{Field: "first", Message: "must be between 0 and 500"}}}
		}
		p.First = int(*first)
	}
	if after != nil && *after != "" {
		c, err := DecodeCursor(*after)
		if err != nil {
			return p, err
		}
		p.After = c
	}
	return p, nil
}

// Cursor is a keyset position: the sort key and id of the last item seen.
// Paging by position (not offset) stays correct while records are added and
// costs an index seek however deep the page.
type Cursor struct {
	// Key is the sort field's value: RFC 3339 text for times, a number otherwise.
	Key any    `json:"k"`
	ID  string `json:"i"`
	// Field names the order field the cursor belongs to, so a cursor from
	// one ordering cannot be replayed against another.
	Field string `json:"f"`
}

// Encode returns the opaque text form of c.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c) // Cursor holds only strings and numbers
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses the opaque text form of a cursor.
func DecodeCursor(s string) (*Cursor, error) {
	bad := &Error{Code: EINVALID, Message: "after is not a valid cursor",
		Fields: []FieldError{{Field: "after", Message: "is not a valid cursor"}}}
	if len(s) > 1024 {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID == "" || c.Key == nil {
		return nil, bad
	}
	return &c, nil
}

// PageInfo describes where a page stands, in Relay's terms.
type PageInfo struct {
	HasNextPage bool
	EndCursor   *string
	StartCursor *string
}

// RecordPage is one page of records with each record's cursor.
type RecordPage = PageOf[*Record]

// AuditFilter narrows an audit listing.
type AuditFilter struct {
	// Order is the listing's order ("": oldest first).
	Order    AuditOrder
	RecordID *string
	Actor    *string
	Action   *AuditAction
	Since    *time.Time
	Until    *time.Time
}

// AuditPage is one page of audit entries, oldest first.
type AuditPage = PageOf[*AuditEntry]

// RecordStore stores and finds records. It is implemented by the neo4j
// package; every method runs in one transaction.
type RecordStore interface {
	// CreateRecords writes records and their create audit entries in one
	// transaction. Returns ECONFLICT if an id exists already. With idem, a
	// repeated request returns the records the first one created.
	CreateRecords(ctx context.Context, idem *Idempotency, recs []*Ingested) ([]*Record, error)
	// FindRecordByID returns ENOTFOUND if no record has the id.
	FindRecordByID(ctx context.Context, id string) (*Record, error)
	// FindRecords returns a keyset page of records matching filter.
	FindRecords(ctx context.Context, filter RecordFilter, order RecordOrder, page Page) (*RecordPage, error)
	// CountRecords counts the records matching filter.
	CountRecords(ctx context.Context, filter RecordFilter) (int64, error)
	// FindAuditEntries returns a page of audit entries in filter.Order.
	FindAuditEntries(ctx context.Context, filter AuditFilter, page Page) (*AuditPage, error)
	// AuditPagesForRecords returns one page of audit entries in order
	// ("": oldest first) per record id, in one round trip; the result is
	// keyed by record id.
	AuditPagesForRecords(ctx context.Context, ids []string, order AuditOrder, page Page) (map[string]*AuditPage, error)
	// LocateRecords returns the level and scope of each of ids that names
	// a record or a deleted one (UnknownLevel when nothing is left to
	// tell); other ids are absent. Provenance sources are gated on them.
	LocateRecords(ctx context.Context, ids []string) (map[string]RecordLocation, error)
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
}

// AuditOrder orders audit listings by time.
type AuditOrder string

// Audit orders. Oldest first is the default, as a trail reads.
const (
	AuditOldestFirst AuditOrder = "oldest_first"
	AuditNewestFirst AuditOrder = "newest_first"
)

// Valid reports whether o is a known order.
func (o AuditOrder) Valid() bool { return o == AuditOldestFirst || o == AuditNewestFirst }
