package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hook command runs the hook program beside the-loop's binary when one
// is installed there (decisions D37), and `the-loop hook` where none is,
// or where the file of its name is not an executable.
func TestHookCommand_TheHookProgramBesideTheBinaryElseTheLoopHook(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "the-loop")
	want := "'" + bin + "' hook --state-root '/s' --session 'standing:a'"
	if got := HookCommand(bin, "/s", "standing:a"); got != want {
		t.Fatalf("no hook program beside the binary: %s, want %s", got, want)
	}
	prog := filepath.Join(dir, HookProgramName)
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := HookCommand(bin, "/s", "standing:a"); got != want {
		t.Fatalf("a hook program that is not executable: %s, want %s", got, want)
	}
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	want = "'" + prog + "' --state-root '/s' --session 'standing:a'"
	if got := HookCommand(bin, "/s", "standing:a"); got != want {
		t.Fatalf("a hook program beside the binary: %s, want %s", got, want)
	}
	if got, want := HookEnvCommand(bin), "'"+prog+"' --from-env --json"; got != want {
		t.Fatalf("the env form with a hook program beside the binary: %s, want %s", got, want)
	}
	if got, want := HookEnvCommand(filepath.Join(t.TempDir(), "the-loop")), " hook --from-env --json"; !strings.HasSuffix(got, want) {
		t.Fatalf("the env form without one: %s, want … %s", got, want)
	}
}
