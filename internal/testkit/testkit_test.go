package testkit_test

import (
	"errors"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// Fast: before its start-up, which here would last an hour.
func TestFakeAgent_ResumeOfAnUnknownConversationFailsFast(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(time.Hour))
	err := exec.Command(agent.Path(), "--resume", "nope", "prompt").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("resume of an unknown id: %v, want exit 1", err)
	}
	var kinds []string
	for _, e := range agent.Log() {
		kinds = append(kinds, e.Kind)
	}
	if e := agent.Entries("resume_failed"); len(e) != 1 || e[0].SessionID != "nope" || !slices.Equal(kinds, []string{"start", "resume_failed"}) {
		t.Fatalf("log = %+v", agent.Log())
	}
}

func TestFakeAgent_LogsItsStartAndExitsByItself(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.ExitAfter(50*time.Millisecond, 4), testkit.Env("THE_LOOP_X", "y"))
	if err := agent.WriteTranscript("c1", "earlier"); err != nil {
		t.Fatal(err)
	}
	err := exec.Command(agent.Path(), "--resume", "c1", "--flag", "the prompt;").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("exit: %v, want status 4", err)
	}
	start := agent.WaitForKind(t, "start", time.Second)
	if !start.Resume || start.SessionID != "c1" || start.Prompt != "the prompt;" || start.Env["THE_LOOP_X"] != "y" {
		t.Fatalf("start = %+v", start)
	}
	if msgs, ok := agent.Transcript("c1"); !ok || len(msgs) != 1 || msgs[0] != "earlier" {
		t.Fatalf("transcript = %q, %v", msgs, ok)
	}
}

func TestTmux_PrivateSocketNames(t *testing.T) {
	a, b := testkit.Tmux(t), testkit.Tmux(t)
	if a == b || a == "" || a == "default" {
		t.Fatalf("sockets %q and %q", a, b)
	}
	if _, err := testkit.TmuxRun(a, "new-session", "-d", "-s", "loop-k", "sleep", "30"); err != nil {
		t.Fatal(err)
	}
	if out, err := testkit.TmuxRun(b, "list-sessions"); err == nil {
		t.Fatalf("server %s sees %q: servers are not private", b, out)
	}
}
