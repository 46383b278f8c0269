package membrane

import "time"

// PageOf is one keyset page of items, each with the opaque cursor of its
// position; every listing (records, audit entries, job runs) returns one.
type PageOf[T any] struct {
	Items    []T
	Cursors  []string
	PageInfo PageInfo
}

// NewPageOf builds the page of at most first items from rows read one past
// it (first+1): a row beyond first only tells that another page follows and
// is dropped. cursor gives an item's keyset position.
func NewPageOf[T any](rows []T, first int, cursor func(T) Cursor) *PageOf[T] {
	p := &PageOf[T]{}
	if len(rows) > first {
		rows = rows[:first]
		p.PageInfo.HasNextPage = true
	}
	p.Items = rows
	p.Cursors = make([]string, len(rows))
	for i, item := range rows {
		p.Cursors[i] = cursor(item).Encode()
	}
	if n := len(rows); n > 0 {
		p.PageInfo.StartCursor, p.PageInfo.EndCursor = &p.Cursors[0], &p.Cursors[n-1]
	}
	return p
}

// TimeCursor is the position of the item id ordered by the instant at in
// the listing field. The instant is kept as RFC 3339 text in UTC, to the
// nanosecond, so that the next page starts exactly after it.
func TimeCursor(field string, at time.Time, id string) Cursor {
	return Cursor{Key: at.UTC().Format(time.RFC3339Nano), ID: id, Field: field}
}

// TimeKey returns the instant of a cursor of the listing field; ok is false
// for a cursor of another listing or ordering, or one whose key is not an
// instant, which the caller reports as EINVALID in its own words.
func (c *Cursor) TimeKey(field string) (at time.Time, ok bool) {
	s, isText := c.Key.(string)
	if !isText || c.Field != field {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
