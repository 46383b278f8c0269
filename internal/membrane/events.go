package membrane

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
)

// The change feed: every audit entry, once committed, gets the next number
// of one database-wide sequence, in commit order. Subscriptions read entries
// by that number, so any server replica serves any subscriber, and a
// subscriber that reconnects with the cursor of the last event it received
// gets exactly the events after it: none lost, none twice.

// MaxFilterValues bounds each list of a change filter.
const MaxFilterValues = 100

// ChangeFilter narrows a change feed. Empty lists match everything; within
// a list any value matches, across lists all must.
type ChangeFilter struct {
	RecordIDs []string
	Types     []MemoryType
	Scopes    []string
	Actions   []AuditAction
	Actors    []string
}

// Validate reports bad filter values as EINVALID with the fields named.
func (f ChangeFilter) Validate() error {
	var fields []FieldError
	for name, n := range map[string]int{"ids": len(f.RecordIDs), "types": len(f.Types), "scopes": len(f.Scopes),
		"actions": len(f.Actions), "actors": len(f.Actors)} {
		if n > MaxFilterValues {
			fields = append(fields, FieldError{Field: "filter." + name, Message: "at most " + strconv.Itoa(MaxFilterValues) + " values"})
		}
	}
	for i, id := range f.RecordIDs {
		if strings.TrimSpace(id) == "" {
			fields = append(fields, FieldError{Field: "filter.ids[" + strconv.Itoa(i) + "]", Message: "must not be blank"})
		}
	}
	for _, t := range f.Types {
		if !t.Valid() {
			fields = append(fields, FieldError{Field: "filter.types", Message: "unknown memory type " + strconv.Quote(string(t))})
		}
	}
	for _, a := range f.Actions {
		if !a.Valid() {
			fields = append(fields, FieldError{Field: "filter.actions", Message: "unknown action " + strconv.Quote(string(a))})
		}
	}
	if len(fields) > 0 {
		return &Error{Code: EINVALID, Message: "invalid change filter", Fields: fields}
	}
	return nil
}

// Event is one audit entry of the change feed.
type Event struct {
	// Seq is the entry's place in the feed.
	Seq   int64
	Entry *AuditEntry
	// Record is the record's current state as the subscriber may see it
	// (possibly redacted); nil when it no longer exists or was not asked for.
	Record *Record
	// Redacted is true when the subscriber sees the record only redacted;
	// the entry's free text (rationale, previous values, actor detail) is
	// then withheld.
	Redacted bool
}

// Cursor returns the opaque cursor that resumes a feed after e.
func (e *Event) Cursor() string { return EventCursor(e.Seq) }

// EventQuery reads one batch of the feed for the request's trust.
type EventQuery struct {
	// After and UpTo bound the sequence numbers read: After < seq <= UpTo.
	After, UpTo int64
	Limit       int
	Filter      ChangeFilter
	// WithRecords reads each entry's record too, and includes entries of
	// records the request sees redacted (recordChanged). Without it, only
	// entries of records seen in full (auditAppended).
	WithRecords bool
}

// EventBatch is one read of the feed.
type EventBatch struct {
	Events []*Event
	// Next is the position the next read continues after: q.UpTo when
	// every entry up to it was read, else the last entry read.
	Next int64
}

// FeedHead is the state of the change feed.
type FeedHead struct {
	// Seq is the last number given out.
	Seq int64
	// Pending is true when committed entries await a number.
	Pending bool
}

// EventService reads and numbers the change feed.
type EventService interface {
	// FeedHead returns the feed's head.
	FeedHead(ctx context.Context) (FeedHead, error)
	// SequenceEvents numbers up to batch committed entries that have no
	// number yet, and returns how many it numbered and the new head.
	SequenceEvents(ctx context.Context, holder string, batch int) (int, int64, error)
	// Events returns the events q selects, by sequence number, gated by the
	// request's trust.
	Events(ctx context.Context, q EventQuery) (EventBatch, error)
}

const eventCursorPrefix = "feed:"

// EventCursor returns the opaque cursor of the feed position seq.
func EventCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(eventCursorPrefix + strconv.FormatInt(seq, 10)))
}

// DecodeEventCursor parses an event cursor; anything else is EINVALID.
func DecodeEventCursor(s string) (int64, error) {
	bad := &Error{Code: EINVALID, Message: "after is not a change-feed cursor",
		Fields: []FieldError{{Field: "after", Message: "is not a change-feed cursor"}}}
	if len(s) > 64 {
		return 0, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, bad
	}
	n, ok := strings.CutPrefix(string(b), eventCursorPrefix)
	if !ok {
		return 0, bad
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq < 0 {
		return 0, bad
	}
	return seq, nil
}

// RedactEntry returns what a subscriber who sees a record only redacted may
// see of one of its audit entries: which record, what kind of change and
// when; not who, why or the previous values.
func RedactEntry(a *AuditEntry) *AuditEntry {
	return &AuditEntry{ID: a.ID, RecordID: a.RecordID, Action: a.Action, Timestamp: a.Timestamp}
}
