package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// awaitHook runs the hook program as a PermissionRequest hook of the
// supervisor (--await-decision), as Claude Code would, in the background:
// its stdout arrives on the channel once it exits.
func awaitHook(t *testing.T, e *env, id, command string) <-chan string {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"session_id": id, "hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "run it"}, "prompt_id": "p-approval", "cwd": e.dir})
	cmd := exec.Command(filepath.Join(filepath.Dir(binary), "the-loop-hook"), "--state-root", filepath.Join(e.dir, ".the-loop"),
		"--session", "standing:supervisor", "--await-decision", "60")
	cmd.Dir = t.TempDir()
	cmd.Env = append(filterEnv(os.Environ(), "HOME"), "HOME="+e.home, "THE_LOOP_CLI_CONFIG=/nonexistent/config.yaml")
	cmd.Stdin = bytes.NewReader(payload)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		if err := cmd.Wait(); err != nil {
			t.Errorf("the-loop-hook --await-decision: %v", err)
		}
		done <- out.String()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return done
}

// pendingApprovals is `standing approvals --format json`.
func pendingApprovals(t *testing.T, e *env) []loop.Approval {
	t.Helper()
	r := e.must(0, "standing", "approvals", "--format", "json")
	var list []loop.Approval
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("approvals json: %v\n%s", err, r)
	}
	return list
}

// A PermissionRequest hook waits at the service as a pending approval:
// `standing approvals` lists it, `standing approve` is what the hook
// prints, a deny's message reaches it framed; a settled id is refused
// (exit 1, a conflict), none pending is exit 1, several exit 2; with the
// service down the hook prints nothing.
func TestApprovals_DecidedFromTheCLIReachTheWaitingHook(t *testing.T) {
	e := hookEnv(t, hookServiceConfig)
	e.must(0, "start")
	row := waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	settings, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "local", "hooks", "loop-standing-supervisor.json"))
	if err != nil || !strings.Contains(string(settings), "--await-decision 600") || !strings.Contains(string(settings), `"timeout": 610`) {
		t.Errorf("the spawn's settings declare no PermissionRequest hook waiting 600 s with a 610 s timeout (%v):\n%s", err, settings)
	}

	out := awaitHook(t, e, row.HarnessSessionID, "ls /tmp")
	var list []loop.Approval
	waitFor(t, "the approval to be listed", func() bool { list = pendingApprovals(t, e); return len(list) == 1 })
	if a := list[0]; a.Session != "supervisor" || a.Tool != "Bash" || !strings.Contains(string(a.Input), "ls /tmp") {
		t.Fatalf("listed %+v", a)
	}
	if r := e.run("standing", "approvals"); !strings.Contains(r.stdout, list[0].ID) || !strings.Contains(r.stdout, "ls /tmp") {
		t.Errorf("the table does not show the request:\n%s", r)
	}
	e.must(0, "standing", "approve", "supervisor")
	if got := <-out; !strings.Contains(got, `"behavior":"allow"`) || !strings.Contains(got, `"hookEventName":"PermissionRequest"`) {
		t.Errorf("the hook printed %q, want the allow", got)
	}
	if r := e.run("standing", "deny", "supervisor", list[0].ID, "--message", "late"); r.code != 1 || !strings.Contains(r.stderr, "allowed already") {
		t.Errorf("deciding a settled approval: %s; want exit 1 naming it allowed", r)
	}
	if r := e.run("standing", "approve", "supervisor"); r.code != 1 || !strings.Contains(r.stderr, "no pending approval") {
		t.Errorf("approve with none pending: %s; want exit 1", r)
	}

	first, second := awaitHook(t, e, row.HarnessSessionID, "make"), awaitHook(t, e, row.HarnessSessionID, "make check")
	waitFor(t, "both approvals to be listed", func() bool { list = pendingApprovals(t, e); return len(list) == 2 })
	if r := e.run("standing", "deny", "supervisor", "--message", "no"); r.code != 2 || !strings.Contains(r.stderr, list[0].ID) || !strings.Contains(r.stderr, list[1].ID) {
		t.Errorf("deny with two pending and no id: %s; want exit 2 listing both", r)
	}
	e.must(0, "standing", "deny", "supervisor", list[0].ID, "--message", "use the Makefile's test target")
	e.must(0, "standing", "approve", "supervisor", list[1].ID)
	denied, allowed := <-first, <-second
	if strings.Contains(string(list[0].Input), "make check") {
		denied, allowed = allowed, denied
	}
	if !strings.Contains(denied, `"behavior":"deny"`) || !strings.Contains(denied, "Denied by operator") || !strings.Contains(denied, "use the Makefile's test target") {
		t.Errorf("the denied hook printed %q", denied)
	}
	if !strings.Contains(allowed, `"behavior":"allow"`) {
		t.Errorf("the allowed hook printed %q", allowed)
	}
	decided := e.events("--type", "standing.approval_decided")
	if len(decided) != 3 || decided[0].Field("by") != "operator" {
		t.Errorf("approval_decided events: %+v", decided)
	}

	e.must(0, "stop")
	if got := <-awaitHook(t, e, row.HarnessSessionID, "ls"); got != "" {
		t.Errorf("with the service down the hook printed %q, want nothing", got)
	}
}

const approvalRulesConfig = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 0.5, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  approvals:
    waitSeconds: 30
    rules:
      - {tool: Bash, match: "rm -rf *", decision: deny, message: "never rm -rf here"}
  sessions:
    - {name: supervisor, cwd: %DIR%, prompt: Watch.}
`

// A session with rules gets a PreToolUse hook that answers from the rules
// file beside its settings — a deny with nobody asked, the service up or
// down — and its PermissionRequest hook waits the configured seconds.
func TestApprovals_RulesAnswerInThePreToolUseHookWithTheServiceUpOrDown(t *testing.T) {
	e := hookEnv(t, approvalRulesConfig)
	e.must(0, "start")
	waitActivity(t, e, "the boot turn", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle && r.LastAnswerAt != "" })
	hooks := filepath.Join(e.dir, ".the-loop", "local", "hooks")
	settings, err := os.ReadFile(filepath.Join(hooks, "loop-standing-supervisor.json"))
	if err != nil || !strings.Contains(string(settings), "--await-decision 30") || !strings.Contains(string(settings), `"timeout": 40`) ||
		!strings.Contains(string(settings), "--rules") {
		t.Fatalf("the spawn's settings (%v):\n%s", err, settings)
	}
	deny := func() string {
		cmd := exec.Command(filepath.Join(filepath.Dir(binary), "the-loop-hook"), "--rules", filepath.Join(hooks, "loop-standing-supervisor.rules.json"))
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"cwd":"` + e.dir + `"}`)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the rules hook: %v", err)
		}
		return string(out)
	}
	if got := deny(); !strings.Contains(got, `"permissionDecision":"deny"`) || !strings.Contains(got, "never rm -rf here") {
		t.Errorf("the rules hook answered %q, want the deny", got)
	}
	e.must(0, "stop")
	if got := deny(); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Errorf("with the service down the rules hook answered %q, want the deny", got)
	}
}
