package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// supervised is one session under the service, with a short resume probe.
const supervised = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 1, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  restart: {maxDelaySeconds: 1%RESTART%}
  sessions:
    - {name: supervisor, cwd: %DIR%, prompt: Watch the work items.%ENTRY%}
`

// supervisedEnv is serviceEnv for supervised with the agent's options;
// restart is added to standingSessions.restart, entry to the entry.
func supervisedEnv(t *testing.T, restart, entry string, opts ...testkit.AgentOption) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.port = freePort(t)
	yaml := strings.NewReplacer("%PORT%", fmt.Sprint(e.port), "%RESTART%", restart, "%ENTRY%", entry).Replace(supervised)
	e.config(yaml)
	t.Cleanup(func() {
		e.run("stop")
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return e
}

// lastStart is the fake agent's newest start entry.
func (e *env) lastStart() testkit.Entry {
	e.t.Helper()
	s := e.starts()
	if len(s) == 0 {
		e.t.Fatal("no agent started")
	}
	return s[len(s)-1]
}

// startedOnce starts the service and the session, and returns its agent.
func (e *env) startedOnce() testkit.Entry {
	e.t.Helper()
	e.must(0, "start")
	waitFor(e.t, "the agent", func() bool { return len(e.starts()) == 1 })
	return e.lastStart()
}

// waitEvent waits for a standing event of the session and returns it.
func (e *env) waitEvent(typ string, within time.Duration) loop.Event {
	e.t.Helper()
	var got []loop.Event
	testkit.Eventually(e.t, func() bool {
		got = e.events("--standing", "supervisor", "--type", typ)
		return len(got) > 0
	}, within, "event %s", typ)
	return got[len(got)-1]
}

// TestSupervise_SIGKILLIsRestartedWithTheSameConversation:
// the exit is recorded with its signal, and within 10 s a new agent runs
// with --resume <the same id>, announced by standing.restarting.
func TestSupervise_SIGKILLIsRestartedWithTheSameConversation(t *testing.T) {
	e := supervisedEnv(t, "", "")
	first := e.startedOnce()
	// Claude Code writes its transcript as it goes; the fake only on exit.
	if err := e.agent.WriteTranscript(first.SessionID, "boot"); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	testkit.Eventually(t, func() bool { return len(e.starts()) == 2 }, 10*time.Second, "a restarted agent within 10 s")
	again := e.lastStart()
	if !again.Resume || again.SessionID != first.SessionID || !slices.Contains(again.Argv, "--resume") {
		t.Fatalf("restarted agent %+v, want --resume %s", again, first.SessionID)
	}
	if !strings.Contains(again.Prompt, "the-loop resumed this conversation") || !strings.Contains(again.Prompt, "SIGKILL") ||
		strings.Contains(again.Prompt, "Watch the work items.") {
		t.Fatalf("the resume notice: %q", again.Prompt)
	}
	exited := e.waitEvent("standing.exited", 5*time.Second)
	// This kill's exit (how soon the supervisor sees one is the benchmark's figure).
	if exited.Field("signal") != "SIGKILL" || exited.TS.Before(killed.Truncate(time.Second)) {
		t.Fatalf("standing.exited %+v, %v after the kill", exited, exited.TS.Sub(killed))
	}
	restarting := e.waitEvent("standing.restarting", time.Second)
	if fmt.Sprint(restarting.Field("attempt")) != "1" {
		t.Fatalf("standing.restarting %+v", restarting)
	}
	e.waitEvent("standing.resumed", 5*time.Second)
	row := e.rows()["supervisor"]
	if row.Restarts != 1 || row.LastExit == nil || row.LastExit.Signal != "SIGKILL" || row.LastExit.Code != nil || !row.Supervised || !row.Running {
		t.Fatalf("row %+v (lastExit %+v)", row, row.LastExit)
	}
}

// TestSupervise_CleanExitUnderOnFailureIsNotRestarted.
func TestSupervise_CleanExitUnderOnFailureIsNotRestarted(t *testing.T) {
	e := supervisedEnv(t, "", "", testkit.ExitAfter(1500*time.Millisecond, 0))
	e.startedOnce()
	ev := e.waitEvent("standing.not_restarted", 10*time.Second)
	if !strings.Contains(fmt.Sprint(ev.Field("reason")), "status 0") {
		t.Fatalf("not_restarted %+v", ev)
	}
	row := e.rows()["supervisor"]
	if row.LastExit == nil || row.LastExit.Code == nil || *row.LastExit.Code != 0 || row.Restarts != 0 || len(e.starts()) != 1 {
		t.Fatalf("row %+v, %d starts", row, len(e.starts()))
	}
}

// TestSupervise_PolicyNeverIsNotRestarted: the entry's
// restart: never wins over the default, and the row is not supervised.
func TestSupervise_PolicyNeverIsNotRestarted(t *testing.T) {
	e := supervisedEnv(t, "", ", restart: never")
	first := e.startedOnce()
	if row := e.rows()["supervisor"]; row.Supervised {
		t.Fatalf("a never session reads supervised: %+v", row)
	}
	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	ev := e.waitEvent("standing.not_restarted", 10*time.Second)
	if !strings.Contains(fmt.Sprint(ev.Field("reason")), "never") || len(e.starts()) != 1 {
		t.Fatalf("not_restarted %+v, %d starts", ev, len(e.starts()))
	}
}

// TestSupervise_RepeatedFailuresFailAndStartClearsIt: more
// restarts than the burst → failed, status exits 1, standing start clears it.
func TestSupervise_RepeatedFailuresFailAndStartClearsIt(t *testing.T) {
	e := supervisedEnv(t, ", burst: 2", "", testkit.ExitAfter(1500*time.Millisecond, 3))
	e.startedOnce()
	ev := e.waitEvent("standing.restart_limited", 30*time.Second)
	if fmt.Sprint(ev.Field("restarts")) != "2" {
		t.Fatalf("restart_limited %+v", ev)
	}
	if n := len(e.starts()); n != 3 {
		t.Fatalf("%d agent starts, want the first and 2 restarts", n)
	}
	row := e.rows()["supervisor"]
	if row.Status != loop.StatusFailed || row.LastExit == nil || row.LastExit.Code == nil || *row.LastExit.Code != 3 {
		t.Fatalf("row %+v", row)
	}
	rep, r := e.status()
	if r.code != 1 || rep.OK {
		t.Fatalf("status of a failed session: %s", r)
	}
	if r = e.must(1, "status"); !regexpMatch("(?m)^supervisor +failed after repeated restarts", r.stdout) {
		t.Fatalf("status text: %s", r)
	}
	r = e.must(0, "standing", "start", "supervisor")
	if !strings.Contains(r.stdout, "resumed") && !strings.Contains(r.stdout, "started") {
		t.Fatalf("standing start: %s", r)
	}
	if st := e.rows()["supervisor"].Status; st != loop.StatusRunning {
		t.Fatalf("status after standing start: %s", st)
	}
}

// TestSupervise_OperatorStopIsNeverFollowedByARestart: a
// stop during the restart's delay (or just after the restart) has the last
// word.
func TestSupervise_OperatorStopIsNeverFollowedByARestart(t *testing.T) {
	e := supervisedEnv(t, "", "")
	first := e.startedOnce()
	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	e.waitEvent("standing.restarting", 10*time.Second)
	e.must(0, "standing", "stop", "supervisor")
	starts := len(e.starts())
	// Longer than a look, the first delay (1 s + 20 %) and a resume probe.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if n := len(e.starts()); n != starts {
			t.Fatalf("an agent started after the operator's stop (%d starts, %d before)", n, starts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if row := e.rows()["supervisor"]; row.Status != loop.StatusStopped || row.Running {
		t.Fatalf("row after stop %+v", row)
	}
}

// TestServe_StartsAutoStartSessionsAndReloadsOnSIGHUP:
// `serve` in the foreground starts the autoStart sessions; SIGHUP leaves it
// running with service.reloaded and the sessions untouched.
func TestServe_StartsAutoStartSessionsAndReloadsOnSIGHUP(t *testing.T) {
	e := supervisedEnv(t, "", "")
	cmd := e.command("serve")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	gone := make(chan struct{}) // closed once serve has exited, however exited was read
	go func() { exited <- cmd.Wait(); close(gone) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if _, ok := testkit.AwaitOK(t, gone); !ok {
			_ = cmd.Process.Kill()
		}
	})
	waitFor(t, "serve to start the autoStart session", func() bool { return len(e.starts()) == 1 })
	first := e.lastStart()
	started := e.waitEvent("standing.started", 5*time.Second)
	if started.Source != "service" {
		t.Fatalf("standing.started from %q", started.Source)
	}
	waitFor(t, "the row", func() bool { return e.rows()["supervisor"].Running })

	e.config(strings.NewReplacer("%PORT%", fmt.Sprint(e.port), "%RESTART%", ", burst: 3", "%ENTRY%", "").Replace(supervised))
	// A request the service answers before the signal reads the edited
	// file and puts it in use: the SIGHUP still reports the change.
	e.rows()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var reloaded []loop.Event
	waitFor(t, "service.reloaded", func() bool {
		reloaded = e.events("--type", "service.reloaded")
		return len(reloaded) == 1
	})
	if reloaded[0].Field("changed") != true {
		t.Fatalf("service.reloaded %+v", reloaded[0])
	}
	select {
	case err := <-exited:
		t.Fatalf("serve ended on SIGHUP (%v): %s", err, out.String())
	default:
	}
	if n := len(e.starts()); n != 1 || !e.alive("loop-standing-supervisor") || testkit.ProcessGone(first.Pid) {
		t.Fatalf("SIGHUP touched the session: %d starts, alive %v", n, e.alive("loop-standing-supervisor"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := testkit.Await(t, exited, "serve to end on SIGTERM"); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, out.String())
	}
}

// manySessions declares n sessions, spawned at most 4 at a time.
func manySessions(n int) string {
	var b strings.Builder
	b.WriteString(`
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 1, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  startConcurrency: 4
  restart: {maxDelaySeconds: 1}
  sessions:
`)
	for i := range n {
		fmt.Fprintf(&b, "    - {name: s%02d, cwd: %%DIR%%}\n", i)
	}
	return b.String()
}

// spawnLog puts a tmux in front of the real one that logs when each
// new-session begins ("b <ns>") and ends ("e <ns>"), and each respawn-pane
// ("rb", "re"): a fresh spawn runs both, one into a dead pane only the
// respawn-pane.
func (e *env) spawnLog() string {
	e.t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		e.t.Fatal(err)
	}
	dir := e.t.TempDir()
	logf := filepath.Join(dir, "spawns.log")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" new-session "*)
	echo "b $(date +%%s%%N)" >> %[2]q
	%[1]q "$@"; rc=$?
	echo "e $(date +%%s%%N)" >> %[2]q
	exit $rc;;
*" respawn-pane "*)
	echo "rb $(date +%%s%%N)" >> %[2]q
	%[1]q "$@"; rc=$?
	echo "re $(date +%%s%%N)" >> %[2]q
	exit $rc;;
esac
exec %[1]q "$@"
`, real, logf)
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.path = dir + string(os.PathListSeparator) + e.path
	return logf
}

// mostAtOnce is how many spawns' tmux calls of the log ran at once at most,
// and how many spawns (respawn-panes) began at or after since (unix ns).
func mostAtOnce(t *testing.T, logf string, since int64) (most, spawns int) {
	t.Helper()
	data, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	type mark struct {
		at    int64
		delta int
	}
	var marks []mark
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var kind string
		var at int64
		if _, err := fmt.Sscan(line, &kind, &at); err != nil || at < since {
			continue
		}
		d := 1
		if kind == "e" || kind == "re" {
			d = -1
		}
		if kind == "rb" { // every spawn, fresh or into a dead pane, runs one respawn-pane
			spawns++
		}
		marks = append(marks, mark{at, d})
	}
	slices.SortStableFunc(marks, func(a, b mark) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta) // an end before a begin at one instant
	})
	busy := 0
	for _, m := range marks {
		busy += m.delta
		most = max(most, busy)
	}
	return most, spawns
}

// TestSupervise_FiftyKilledAtOnceRestartFourAtATime: with
// startConcurrency 4, 50 agents killed at once are restarted no more than
// 4 spawns at a time, and all run again within 30 s.
func TestSupervise_FiftyKilledAtOnceRestartFourAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("50 agents: not with -short")
	}
	const n = 50
	e := newEnv(t)
	e.port = freePort(t)
	e.config(strings.ReplaceAll(manySessions(n), "%PORT%", fmt.Sprint(e.port)))
	t.Cleanup(func() {
		e.run("stop")
		if pid := e.servicePID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	logf := e.spawnLog()
	began := time.Now().UnixNano()
	e.must(0, "start")
	testkit.Eventually(t, func() bool { return len(e.starts()) == n }, 60*time.Second, "%d agents", n)
	if most, spawns := mostAtOnce(t, logf, began); most > 4 || spawns != n {
		t.Fatalf("start-all: %d spawns, %d at once (limit 4)", spawns, most)
	}
	for _, s := range e.starts() {
		if err := e.agent.WriteTranscript(s.SessionID, "boot"); err != nil {
			t.Fatal(err)
		}
	}
	killed := time.Now()
	for _, s := range e.starts() {
		_ = syscall.Kill(s.Pid, syscall.SIGKILL)
	}
	testkit.Eventually(t, func() bool {
		if len(e.starts()) < 2*n {
			return false
		}
		for _, row := range e.rows() {
			if !row.Running {
				return false
			}
		}
		return true
	}, 30*time.Second, "all %d running again within 30 s", n)
	t.Logf("all %d running again %v after the kill", n, time.Since(killed).Round(time.Millisecond))
	most, spawns := mostAtOnce(t, logf, killed.UnixNano())
	if most > 4 || spawns < n {
		t.Fatalf("restarts: %d spawns, %d at once (limit 4)", spawns, most)
	}
	for _, s := range e.starts()[n:] {
		if !s.Resume {
			t.Fatalf("a restart did not resume: %+v", s)
		}
	}
}

// TestSupervise_WithoutTheServiceNothingRestarts: a session started in
// this process (service disabled) stays dead when its agent dies.
func TestSupervise_WithoutTheServiceNothingRestarts(t *testing.T) {
	e := newEnv(t)
	e.config(strings.Replace(oneSession, "state: {root: .the-loop}\n", "state: {root: .the-loop}\nservice: {enabled: false}\n", 1))
	first := e.startedOnce()
	_ = syscall.Kill(first.Pid, syscall.SIGKILL)
	waitFor(t, "the pane to die", func() bool { return !e.alive("loop-standing-supervisor") })
	// Longer than a supervisor's look, its first delay and a resume probe.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if n := len(e.starts()); n != 1 {
			t.Fatalf("%d agent starts without a service", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if row := e.rows()["supervisor"]; row.Supervised || row.Running || row.LastExit != nil {
		t.Fatalf("row %+v", row)
	}
}
