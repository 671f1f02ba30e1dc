package testkit

import (
	"testing"
	"time"
)

// Await waits for ch to deliver and returns what it delivered. It is for a
// call that must return at all (a stop behind a stuck verb, a loop whose
// context ended): it waits as long as the test may run, not a wall-clock
// figure a loaded machine can miss. A little before the test's deadline
// (go test -timeout) it fails the test with the formatted message; a test
// without a deadline waits for ever. A closed channel delivers at once.
func Await[V any](t testing.TB, ch <-chan V, format string, args ...any) V {
	t.Helper()
	v, ok := AwaitOK(t, ch)
	if !ok {
		t.Fatalf("still waiting as the test's deadline nears: "+format, args...)
	}
	return v
}

// AwaitOK is Await for a caller with a fallback of its own (a cleanup that
// kills what did not exit): ok is false, and the test goes on, when ch has
// not delivered a little before the test's deadline.
func AwaitOK[V any](t testing.TB, ch <-chan V) (V, bool) {
	select {
	case v := <-ch:
		return v, true
	case <-nearDeadline(t):
		var zero V
		return zero, false
	}
}

// nearDeadline delivers a little before the test's deadline (a tenth of
// the time left, 30 s at the most); it never delivers for a test without
// one.
func nearDeadline(t testing.TB) <-chan time.Time {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			left := time.Until(deadline)
			return time.After(left - min(left/10, 30*time.Second))
		}
	}
	return nil
}
