package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// withoutAgent is the env's PATH without the fake agent: an operator's
// shell where the stand-in `just run` put on PATH is not.
func (e *env) withoutAgent() { e.path = os.Getenv("PATH") }

const restartSessions = `
state: {root: .the-loop}
service: {port: %PORT%}
routing:
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
      prompt: Watch the work items.
`

func TestRestart_KeepsRunningWhatItCouldNotStartAgain(t *testing.T) {
	e, _ := serviceEnv(t, restartSessions)
	e.must(0, "start")
	before := e.rows()["supervisor"]
	if !before.Running {
		t.Fatalf("not running after start: %+v", before)
	}
	e.withoutAgent()
	r := e.run("restart")
	if r.code != 1 {
		t.Fatalf("restart without the harness on PATH: want exit 1, got %s", r)
	}
	if !strings.Contains(r.stderr, "not restarted, left running: harness CLI 'claude' not found on PATH — the PATH searched is this `the-loop restart`'s") {
		t.Fatalf("the row does not say why:\n%s", r)
	}
	after := e.rows()["supervisor"]
	if !after.Running || after.HarnessSessionID != before.HarnessSessionID || after.StartedAt != before.StartedAt {
		t.Fatalf("the session was stopped or restarted: %+v then %+v", before, after)
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("the agent was spawned %d times, want once", n)
	}
	if !e.alive(loop.TmuxTargetFor("supervisor")) {
		t.Fatal("its tmux session is gone")
	}
}

func TestStandingRestart_KeepsRunningWhatItCouldNotStartAgain(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start", "supervisor")
	before := e.rows()["supervisor"]
	e.withoutAgent()
	r := e.run("standing", "restart", "supervisor")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "not restarted, nothing was stopped") ||
		!strings.Contains(r.stdout+r.stderr, "harness CLI 'claude' not found on PATH") {
		t.Fatalf("standing restart without the harness on PATH: %s", r)
	}
	after := e.rows()["supervisor"]
	if !after.Running || after.HarnessSessionID != before.HarnessSessionID || after.StartedAt != before.StartedAt || len(e.starts()) != 1 {
		t.Fatalf("the session was stopped or restarted: %+v then %+v", before, after)
	}
}

func TestStatus_SaysWhyASessionIsDown(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	e.must(0, "standing", "start", "supervisor")
	e.must(0, "standing", "stop", "supervisor")
	if why := e.rows()["supervisor"].DownReason; !strings.HasPrefix(why, "stopped by an operator's stop (") {
		t.Fatalf("after a stop the reason is %q", why)
	}
	e.withoutAgent()
	e.must(1, "standing", "start", "supervisor")
	var rep loop.Report
	r := e.run("status", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.StandingSessions) != 1 {
		t.Fatalf("status json: %v\n%s", err, r)
	}
	row := rep.StandingSessions[0]
	if row.Status != loop.StatusStopped || !strings.HasPrefix(row.DownReason, "its start failed: harness CLI 'claude' not found on PATH") {
		t.Fatalf("status row: status %q, reason %q", row.Status, row.DownReason)
	}
	text := e.run("status").stdout
	if !strings.Contains(text, "its start failed: harness CLI 'claude' not found on PATH") {
		t.Fatalf("text status gives no reason:\n%s", text)
	}
	list := e.run("standing", "list").stdout
	if !strings.Contains(list, "its start failed: harness CLI 'claude' not found on PATH") {
		t.Fatalf("standing list gives no reason:\n%s", list)
	}
}

func TestStatus_SaysASessionsAgentExited(t *testing.T) {
	e := supervisedEnv(t, "", "", testkit.ExitAfter(1500*time.Millisecond, 0))
	e.startedOnce()
	e.waitEvent("standing.not_restarted", 10*time.Second)
	row := e.rows()["supervisor"]
	if row.Running || !strings.HasPrefix(row.DownReason, "its agent exited with status 0 (") {
		t.Fatalf("row running %v, reason %q", row.Running, row.DownReason)
	}
	if text := e.must(1, "status").stdout; !strings.Contains(text, "down: its agent exited with status 0 (") {
		t.Fatalf("status:\n%s", text)
	}
}
