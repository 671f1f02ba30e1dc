package harness

import (
	"errors"
	"reflect"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestRegistry_ExactlyClaudeAndCursor(t *testing.T) {
	r := NewRegistry(ClaudeOptions{})
	if got := r.Names(); !reflect.DeepEqual(got, []string{"claude", "cursor"}) {
		t.Fatalf("Names = %q", got)
	}
	for _, name := range []string{"claude", "cursor"} {
		h, err := r.Lookup(name, "supervisor")
		if err != nil || h.Name() != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, h, err)
		}
	}
}

func TestLookup_UnknownHarness(t *testing.T) {
	for _, h := range []string{"codex", "", "Claude"} {
		_, err := Lookup(h, "supervisor", ClaudeOptions{})
		var le *loop.Error
		want := "unknown harness '" + h + "' for standing session 'supervisor' (one of claude, cursor)"
		if !errors.As(err, &le) || le.Code != loop.EINVALID || le.Message != want {
			t.Fatalf("err = %#v, want EINVALID %q", err, want)
		}
	}
}
