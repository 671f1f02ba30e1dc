package harness

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

func TestRegistry_ClaudeCodexCursorGemini(t *testing.T) {
	r := NewRegistry(ClaudeOptions{})
	want := []string{"claude", "codex", "cursor", "gemini"}
	if got := r.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %q", got)
	}
	for _, name := range want {
		h, err := r.Lookup(name, "supervisor")
		if err != nil || h.Name() != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, h, err)
		}
	}
}

func TestLookup_UnknownHarness(t *testing.T) {
	for _, h := range []string{"cursor-agent", "", "Claude", "Codex"} {
		_, err := Lookup(h, "supervisor", ClaudeOptions{})
		var le *loop.Error
		want := "unknown harness '" + h + "' for standing session 'supervisor' (one of claude, codex, cursor, gemini)"
		if !errors.As(err, &le) || le.Code != loop.EINVALID || le.Message != want {
			t.Fatalf("err = %#v, want EINVALID %q", err, want)
		}
	}
}

func TestRegistry_TrustOptionsReachCodexAndGemini(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	env := func(string) string { return "" }
	r := NewRegistry(ClaudeOptions{TrustEnabled: true, Env: env, Home: home})
	for _, name := range []string{"codex", "gemini"} {
		h, _ := r.Lookup(name, "supervisor")
		if err := h.Prepare(cwd, nil); err != nil {
			t.Fatalf("%s Prepare: %v", name, err)
		}
	}
	if !exists(filepath.Join(home, ".codex", "config.toml")) || !exists(filepath.Join(home, ".gemini", "trustedFolders.json")) {
		t.Fatal("the registry's codex and gemini adapters did not write trust under the given home")
	}
	if _, ok := any(NewRegistry(ClaudeOptions{}).adapters["codex"]).(SessionIDReporter); !ok {
		t.Fatal("codex does not report the id it chose")
	}
	if _, ok := any(NewRegistry(ClaudeOptions{}).adapters["gemini"]).(SessionIDReporter); ok {
		t.Fatal("gemini takes a pre-assigned id; it must not ask for capture")
	}
}

// stepReporter reveals its id on the nth call (0: never), or fails.
type stepReporter struct {
	calls, n int
	err      error
}

func (s *stepReporter) SessionIDOf(int) (string, bool, error) {
	s.calls++
	if s.err != nil {
		return "", false, s.err
	}
	if s.n > 0 && s.calls >= s.n {
		return "01a23137-6aa2-7403-81f6-959f1fab0e62", true, nil
	}
	return "", false, nil
}

func TestWaitSessionID(t *testing.T) {
	r := &stepReporter{n: 3}
	id, err := WaitSessionID(context.Background(), r, 42, time.Millisecond)
	if err != nil || id != "01a23137-6aa2-7403-81f6-959f1fab0e62" || r.calls != 3 {
		t.Fatalf("id %q, err %v after %d calls", id, err, r.calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	never := &stepReporter{}
	if _, err := WaitSessionID(ctx, never, 42, time.Millisecond); loop.ErrorCode(err) != loop.EINTERNAL ||
		!strings.Contains(err.Error(), "not recording it running") || never.calls < 2 {
		t.Fatalf("never revealed: %v after %d calls", err, never.calls)
	}
	boom := errors.New("two conversations")
	if _, err := WaitSessionID(context.Background(), &stepReporter{err: boom}, 42, time.Millisecond); !errors.Is(err, boom) {
		t.Fatalf("a failing capture: %v", err)
	}
}
