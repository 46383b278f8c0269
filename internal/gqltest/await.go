package gqltest

import (
	"testing"
	"time"
)

// Await returns what arrives on ch, failing the test when nothing does
// within a generous protocol timeout (30 s): what names what was awaited.
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing within 30 s", what)
	}
	panic("unreachable")
}
