package membrane

import (
	"context"
	"encoding/base64"
	"slices"
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
	// Gate is what gating and filtering e in memory needs.
	Gate EventGate
}

// EventGate holds the copies an audit entry carries of its record's
// sensitivity, scope and type: what the trust gate and a change filter
// look at. The change feed reads each range of entries once for every
// subscriber and gates it per subscriber in memory (GateEvent), exactly as
// the store gates a subscriber's own read.
type EventGate struct {
	Level int
	Scope string
	// Unscoped is true when the stored entry has no scope at all (entries
	// written before entries carried one): only a trust of every scope
	// sees it, and no scope filter selects it, as in the store.
	Unscoped   bool
	RecordType MemoryType
}

// Matches reports whether f selects e: empty lists match everything;
// within a list any value matches, across lists all must.
func (f ChangeFilter) Matches(e *Event) bool {
	a := e.Entry
	return (len(f.RecordIDs) == 0 || slices.Contains(f.RecordIDs, a.RecordID)) &&
		(len(f.Types) == 0 || slices.Contains(f.Types, e.Gate.RecordType)) &&
		(len(f.Scopes) == 0 || !e.Gate.Unscoped && slices.Contains(f.Scopes, e.Gate.Scope)) &&
		(len(f.Actions) == 0 || slices.Contains(f.Actions, a.Action)) &&
		(len(f.Actors) == 0 || slices.Contains(f.Actors, a.Actor))
}

// CoverFilters returns one filter that selects at least every event one of
// filters selects, to read once for all of them: on each list, the union
// of theirs, or any value when one of them takes any or the union would
// pass limit values. No filters: any event.
func CoverFilters(filters []ChangeFilter, limit int) ChangeFilter {
	if len(filters) == 0 {
		return ChangeFilter{}
	}
	return ChangeFilter{
		RecordIDs: cover(filters, limit, func(f ChangeFilter) []string { return f.RecordIDs }),
		Types:     cover(filters, limit, func(f ChangeFilter) []MemoryType { return f.Types }),
		Scopes:    cover(filters, limit, func(f ChangeFilter) []string { return f.Scopes }),
		Actions:   cover(filters, limit, func(f ChangeFilter) []AuditAction { return f.Actions }),
		Actors:    cover(filters, limit, func(f ChangeFilter) []string { return f.Actors }),
	}
}

func cover[S ~string](filters []ChangeFilter, limit int, list func(ChangeFilter) []S) []S {
	seen := map[S]bool{}
	var out []S
	for _, f := range filters {
		l := list(f)
		if len(l) == 0 {
			return nil
		}
		for _, v := range l {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		if len(out) > limit {
			return nil
		}
	}
	return out
}

// GateEvent returns e as a subscriber of trust t sees it, or nil when it
// sees nothing of it. e is the event as a trust that sees everything
// read it, record included. With withRecords (recordChanged) the
// subscriber gets the record as it may see it, and entries of records it
// sees only redacted without their free text; without (auditAppended)
// only entries of records it sees in full, and no record. e is not
// changed: it is shared by every subscriber.
func (t Trust) GateEvent(e *Event, withRecords bool) *Event {
	vis := t.VisibilityOf(e.Gate.Level, e.Gate.Scope)
	if e.Gate.Unscoped && !t.All {
		vis = Invisible
	}
	if vis == Invisible || vis == Redacted && !withRecords {
		return nil
	}
	out := &Event{Seq: e.Seq, Entry: t.GateEntry(e.Entry), Redacted: vis == Redacted, Gate: e.Gate}
	if out.Redacted {
		out.Entry = RedactEntry(e.Entry)
	}
	if withRecords && e.Record != nil {
		out.Record = t.View(e.Record)
	}
	return out
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

// FeedStore reads the change feed's head: all a transport reads of the
// feed besides following it (ReadService.ChangeCursor).
type FeedStore interface {
	// FeedHead returns the feed's head.
	FeedHead(ctx context.Context) (FeedHead, error)
}

// ErrNoFeed answers the change feed's operations on a server without live
// updates.
var ErrNoFeed = Errorf(ENOTIMPLEMENTED, "live updates are not enabled on this server")

// EventStore reads and numbers the change feed (the feed's hub,
// internal/feed).
type EventStore interface {
	FeedStore
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
// when; not who, why, the previous values or the records it relates to (a
// redacted record shows no relations).
func RedactEntry(a *AuditEntry) *AuditEntry {
	return &AuditEntry{ID: a.ID, RecordID: a.RecordID, Action: a.Action, Timestamp: a.Timestamp}
}
