package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStandingStart_ResumeSpawnFailureLeavesTheNameAndTheConversation: a
// resume whose spawn fails because a session the-loop did not start took
// the tmux name leaves that session running and the recorded conversation
// in the record (defect 1) — it is neither killed nor replaced by
// a fresh conversation.
func TestStandingStart_ResumeSpawnFailureLeavesTheNameAndTheConversation(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	const target = "loop-standing-supervisor"
	e.must(0, "standing", "start", "supervisor")
	waitFor(t, "the agent", func() bool { return len(e.starts()) == 1 })
	id := e.rows()["supervisor"].HarnessSessionID
	e.must(0, "standing", "stop", "supervisor")
	waitFor(t, "the session to end", func() bool { return !e.alive(target) })

	// A tmux in front of the real one: when the-loop creates the session
	// for the resume, someone else's session has taken the name first.
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" new-session "*)
	if [ ! -e %[4]q ]; then
		: > %[4]q
		%[1]q -L %[2]q -f /dev/null new-session -d -s %[3]s "sleep 600"
		echo "duplicate session: %[3]s" >&2
		exit 1
	fi;;
esac
exec %[1]q "$@"
`, real, e.socket, target, filepath.Join(dir, "taken"))
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.path = dir + string(os.PathListSeparator) + e.path

	r := e.must(1, "standing", "start", "supervisor")
	if !strings.Contains(r.stdout+r.stderr, "failed") {
		t.Fatalf("start: %s", r)
	}
	if !e.alive(target) {
		t.Fatalf("the session that took the name was killed: %s", r)
	}
	if tag, _ := e.tmux("show-options", "-v", "-t", "="+target+":", "@the-loop-tag"); strings.TrimSpace(tag) != "" {
		t.Fatalf("the session under the name is the-loop's (tag %q): something was spawned over it", tag)
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d agent starts, want only the first: a fresh conversation replaced the recorded one", n)
	}
	if row := e.rows()["supervisor"]; row.HarnessSessionID != id || row.Status != "stopped" {
		t.Fatalf("record %+v, want stopped with conversation %s", row, id)
	}
}
