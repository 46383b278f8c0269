package membrane_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestNewPageOf(t *testing.T) {
	idCursor := func(id string) membrane.Cursor { return membrane.Cursor{Key: 1.0, ID: id, Field: "test"} }
	rows := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%d", i)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		rows      []string
		first     int
		wantItems []string
		wantNext  bool
	}{
		{"no rows", nil, 3, nil, false},
		{"fewer rows than first", rows(2), 3, rows(2), false},
		{"exactly first rows", rows(3), 3, rows(3), false},
		{"one row past first: another page follows", rows(4), 3, rows(3), true},
		{"first 0 with a row: empty page, another follows", rows(1), 0, []string{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := membrane.NewPageOf(tc.rows, tc.first, idCursor)
			if fmt.Sprint(p.Items) != fmt.Sprint(tc.wantItems) || len(p.Items) != len(tc.wantItems) {
				t.Fatalf("items %v, want %v", p.Items, tc.wantItems)
			}
			if p.PageInfo.HasNextPage != tc.wantNext {
				t.Fatalf("hasNextPage %v, want %v", p.PageInfo.HasNextPage, tc.wantNext)
			}
			if p.Cursors == nil || len(p.Cursors) != len(p.Items) {
				t.Fatalf("cursors %v for %d items", p.Cursors, len(p.Items))
			}
			for i, id := range p.Items {
				c, err := membrane.DecodeCursor(p.Cursors[i])
				if err != nil || c.ID != id || c.Field != "test" {
					t.Fatalf("cursor %d = %+v (%v), want the position of %s", i, c, err, id)
				}
			}
			if len(p.Items) == 0 {
				if p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil {
					t.Fatalf("empty page has start %v end %v", p.PageInfo.StartCursor, p.PageInfo.EndCursor)
				}
				return
			}
			if p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Cursors[0] ||
				p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Cursors[len(p.Cursors)-1] {
				t.Fatalf("start %v end %v, want the first and last of %v", p.PageInfo.StartCursor, p.PageInfo.EndCursor, p.Cursors)
			}
		})
	}
}

func TestTimeCursorKey(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("east", 3*3600))
	decoded := func(c membrane.Cursor) *membrane.Cursor {
		d, err := membrane.DecodeCursor(c.Encode())
		if err != nil {
			t.Fatalf("decode %+v: %v", c, err)
		}
		return d
	}
	for _, tc := range []struct {
		name   string
		cursor *membrane.Cursor
		field  string
		want   bool
	}{
		{"own listing, through its text form", decoded(membrane.TimeCursor("audit", at, "a1")), "audit", true},
		{"another listing", decoded(membrane.TimeCursor("jobRuns", at, "a1")), "audit", false},
		{"a number key", &membrane.Cursor{Key: 0.5, ID: "a1", Field: "audit"}, "audit", false},
		{"text that is no instant", &membrane.Cursor{Key: "yesterday", ID: "a1", Field: "audit"}, "audit", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.cursor.TimeKey(tc.field)
			if ok != tc.want {
				t.Fatalf("ok %v, want %v", ok, tc.want)
			}
			if ok && (!got.Equal(at) || got.Location() != time.UTC) {
				t.Fatalf("instant %v, want %v in UTC to the nanosecond", got, at)
			}
		})
	}
}
