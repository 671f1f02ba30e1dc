package testkit_test

import (
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// In a real tmux pane: a message pasted during a turn shows the Queued note,
// and a permission dialog makes Claude Code's readiness check say no until
// it is answered.
func TestFakeAgent_InTmuxQueuesAndShowsAPermissionDialog(t *testing.T) {
	socket := testkit.Tmux(t)
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.TurnTime(1500*time.Millisecond))
	rec := testkit.RecordHooks(t, t.TempDir())
	cwd := t.TempDir()
	const target = "loop-g"
	if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", target, "-x", "120", "-y", "40", "-c", cwd,
		agent.Path(), "--session-id", sessionID, "--settings", rec.Settings, "--", "first"); err != nil {
		t.Fatal(err)
	}
	screen := func() string {
		out, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", target)
		return out
	}
	ready := func() bool { return (&harness.Claude{}).Ready(loop.PaneSnapshot{Screen: screen()}) }
	paste := func(text string) {
		t.Helper()
		if _, err := testkit.TmuxRun(socket, "set-buffer", "-b", "g", text); err != nil {
			t.Fatal(err)
		}
		if _, err := testkit.TmuxRun(socket, "paste-buffer", "-p", "-d", "-b", "g", "-t", target); err != nil {
			t.Fatal(err)
		}
		if _, err := testkit.TmuxRun(socket, "send-keys", "-t", target, "Enter"); err != nil {
			t.Fatal(err)
		}
	}
	rec.WaitCount(t, "UserPromptSubmit", 1, 10*time.Second)
	paste("second")
	testkit.Eventually(t, func() bool { return strings.Contains(screen(), "⎿  Queued · ctrl+x ctrl+s to send now") },
		5*time.Second, "no Queued note on screen:\n%s", screen())
	if got := len(rec.Of("Stop")); got != 0 {
		t.Fatalf("the first turn ended before the queued note was seen (%d Stops): make the turn longer", got)
	}
	stops := rec.WaitCount(t, "Stop", 2, 15*time.Second)
	if stops[1]["last_assistant_message"] != "fake answer to: second" {
		t.Fatalf("second Stop %v", stops[1])
	}
	testkit.Eventually(t, ready, 5*time.Second, "not ready after the turns:\n%s", screen())

	paste(testkit.FakeTool("Bash", "make test"))
	testkit.Eventually(t, func() bool { return strings.Contains(screen(), "Do you want to proceed?") },
		5*time.Second, "no dialog on screen:\n%s", screen())
	if ready() {
		t.Fatalf("Claude's readiness check takes the permission dialog for the prompt:\n%s", screen())
	}
	// The dialog is drawn before its Notification hook runs: wait for it.
	if n := rec.WaitCount(t, "Notification", 1, 5*time.Second); len(n) != 1 || n[0]["notification_type"] != "permission_prompt" {
		t.Fatalf("Notifications %v", n)
	}
	if _, err := testkit.TmuxRun(socket, "send-keys", "-t", target, "Enter"); err != nil {
		t.Fatal(err)
	}
	rec.WaitCount(t, "PostToolUse", 1, 5*time.Second)
	rec.WaitCount(t, "Stop", 3, 10*time.Second)
	testkit.Eventually(t, ready, 5*time.Second, "not ready after the dialog was answered:\n%s", screen())
	if strings.Contains(screen(), "Do you want to proceed?") {
		t.Fatalf("the answered dialog is still on screen:\n%s", screen())
	}
}
