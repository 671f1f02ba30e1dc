package harness

import (
	"errors"
	"os/exec"
	"path/filepath"
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

func TestResolve(t *testing.T) {
	t.Run("found", func(t *testing.T) {
		got, err := Resolve(NewClaude(ClaudeOptions{}), func(b string) (string, error) {
			if b != "claude" {
				t.Fatalf("looked up %q", b)
			}
			return "/opt/bin/claude", nil
		})
		if err != nil || got != "/opt/bin/claude" {
			t.Fatalf("Resolve = %q, %v", got, err)
		}
	})
	t.Run("relative PATH entry made absolute", func(t *testing.T) {
		got, err := Resolve(NewClaude(ClaudeOptions{}), func(string) (string, error) { return "bin/claude", nil })
		if err != nil || !filepath.IsAbs(got) {
			t.Fatalf("Resolve = %q, %v", got, err)
		}
	})
	for _, tt := range []struct {
		h    loop.Harness
		want string
	}{
		{NewClaude(ClaudeOptions{}), "harness CLI 'claude' not found on PATH — install it or point the claude adapter at the binary"},
		{Cursor{}, "harness CLI 'cursor-agent' not found on PATH — install it or point the cursor adapter at the binary"},
	} {
		t.Run("missing "+tt.h.Name(), func(t *testing.T) {
			_, err := Resolve(tt.h, func(string) (string, error) { return "", exec.ErrNotFound })
			var le *loop.Error
			if !errors.As(err, &le) || le.Code != loop.EINVALID || le.Message != tt.want {
				t.Fatalf("err = %#v, want EINVALID %q", err, tt.want)
			}
			if !errors.Is(err, exec.ErrNotFound) {
				t.Fatal("lookup error not kept as the cause")
			}
		})
	}
	t.Run("default lookPath with empty PATH", func(t *testing.T) {
		t.Setenv("PATH", "")
		if _, err := Resolve(Cursor{}, nil); loop.ErrorCode(err) != loop.EINVALID {
			t.Fatalf("err = %v", err)
		}
	})
}
