package apptest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
)

// TestLogLines: writes are split into lines, a line split over writes is
// joined, the unfinished last line is kept when the log ends, and nothing
// is added after that.
func TestLogLines(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one line per write", []string{"a\n", "b\n"}, []string{"a", "b"}},
		{"lines in one write", []string{"a\nb\nc\n"}, []string{"a", "b", "c"}},
		{"a line over writes", []string{"a", "b\nc", "d\n"}, []string{"ab", "cd"}},
		{"an unfinished last line", []string{"a\nb"}, []string{"a", "b"}},
		{"an empty line", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := apptest.NewLog()
			for _, w := range tt.writes {
				if n, err := fmt.Fprint(l, w); err != nil || n != len(w) {
					t.Fatalf("write %q: %d, %v", w, n, err)
				}
			}
			l.End()
			fmt.Fprint(l, "after the end\n")
			if got := l.Lines(); !slices.Equal(got, tt.want) {
				t.Fatalf("lines %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLogAwait: Await finds a line from the given index on, also one
// written while it waits, and returns the index after it; Since returns
// what came after and says when the log has ended.
func TestLogAwait(t *testing.T) {
	l := apptest.NewLog()
	fmt.Fprint(l, "starting\nmembrane listening\n")
	if i := l.Await(t, 0, "listening", time.Minute); i != 2 {
		t.Fatalf("Await = %d, want 2", i)
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		fmt.Fprint(l, "request\nlistening again\n")
	}()
	// The first "listening" is before index 2: only the line written
	// later matches.
	if i := l.Await(t, 2, "listening", time.Minute); i != 4 {
		t.Fatalf("Await = %d, want 4", i)
	}
	<-written
	lines, ended, _ := l.Since(3)
	if !slices.Equal(lines, []string{"listening again"}) || ended {
		t.Fatalf("Since(3) = %q, ended %v", lines, ended)
	}
	l.End()
	if _, ended, _ := l.Since(4); !ended {
		t.Fatal("Since after End: not ended")
	}
}
