package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

func TestSpawnIn_RunsTheHarnessWithExactlyTheArgvBuilt(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	r := newRunner(t, socket)
	cwd := filepath.Join(t.TempDir(), "work #{session_name};")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := loop.SpawnSpec{Cwd: cwd, Argv: []string{agent.Path(),
		"--session-id", "6f1c1b1e-0000-4000-8000-000000000001",
		"--append-system-prompt", "ends in a separator;", `ends in an escape\;`, ";", "{", "}",
		"#{pane_id}", "$HOME", "", "-t", "--", "multi\nline boot prompt;"}}
	if err := r.SpawnIn(context.Background(), "loop-standing-argv", spec); err != nil {
		t.Fatal(err)
	}
	start := agent.WaitForKind(t, "start", 10*time.Second)
	if !reflect.DeepEqual(start.Argv, spec.Argv[1:]) {
		t.Fatalf("the harness got argv\n%q\nwant\n%q", start.Argv, spec.Argv[1:])
	}
	if start.Cwd != cwd {
		t.Fatalf("cwd = %q, want %q", start.Cwd, cwd)
	}
	if term := start.Env["TERM"]; term == "" || term == "dumb" {
		t.Fatalf("TERM = %q, want tmux's terminal", term)
	}
	size, err := testkit.TmuxRun(socket, "display-message", "-p", "-t", "=loop-standing-argv:", "#{window_width}x#{window_height}")
	if err != nil || size != "200x50" {
		t.Fatalf("window size = %q (%v), want 200x50", size, err)
	}
	if opt, _ := testkit.TmuxRun(socket, "show-options", "-g", "-w", "remain-on-exit"); opt != "remain-on-exit off" {
		t.Fatalf("server-wide option changed: %q", opt)
	}
}

func TestSpawnIn_KeepsTheDeadPaneAndItsExitStatus(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()

	// A harness that exits at once: remain-on-exit must already be on.
	if err := r.SpawnIn(ctx, "loop-quick", loop.SpawnSpec{Argv: []string{"/bin/sh", "-c", "exit 5"}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, "loop-quick", loop.PaneDead)
	if code, err := r.ExitStatus(ctx, "loop-quick"); err != nil || code != 5 {
		t.Fatalf("ExitStatus = %d, %v; want 5", code, err)
	}

	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.ExitAfter(300*time.Millisecond, 3))
	spawnFake(t, r, "loop-exits", agent)
	waitState(t, r, "loop-exits", loop.PaneLive)
	if _, err := r.ExitStatus(ctx, "loop-exits"); !errors.Is(err, runner.ErrStillAlive) {
		t.Fatalf("ExitStatus of a live pane = %v, want ErrStillAlive", err)
	}
	agent.WaitForKind(t, "exit", 10*time.Second)
	waitState(t, r, "loop-exits", loop.PaneDead)
	if code, err := r.ExitStatus(ctx, "loop-exits"); err != nil || code != 3 {
		t.Fatalf("ExitStatus = %d, %v; want 3", code, err)
	}
	if _, ok := agent.Transcript(agent.Entries("start")[0].SessionID); !ok {
		t.Fatal("an agent exiting by itself should flush its transcript")
	}
}

func TestState_ReportsLiveDeadAbsent(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	if st := r.State(ctx, "loop-s"); st != loop.PaneAbsent {
		t.Fatalf("no server: State = %s, want absent", st)
	}
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-s", agent)
	if st := r.State(ctx, "loop-s"); st != loop.PaneLive {
		t.Fatalf("State = %s, want live", st)
	}
	if st := r.State(ctx, "loop-other"); st != loop.PaneAbsent {
		t.Fatalf("State of a missing session on a running server = %s, want absent", st)
	}
	if err := r.TerminateHarnessIn(ctx, "loop-s", "test", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if st := r.State(ctx, "loop-s"); st != loop.PaneDead {
		t.Fatalf("State = %s, want dead", st)
	}
	if err := r.KillTarget(ctx, "loop-s"); err != nil {
		t.Fatal(err)
	}
	if st := r.State(ctx, "loop-s"); st != loop.PaneAbsent {
		t.Fatalf("State = %s, want absent", st)
	}
	if err := r.KillTarget(ctx, "loop-s"); !errors.Is(err, runner.ErrNoSession) || loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("KillTarget of a gone session = %v, want ENOTFOUND", err)
	}
}

func TestState_UnknownWhenTmuxDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	slow := runner.New(runner.Options{Socket: "the-loop-test-never", Cmd: hanging{},
		ProbeTimeout: 50 * time.Millisecond, CommandTimeout: 50 * time.Millisecond})
	if st := slow.State(ctx, "loop-a"); st != loop.PaneUnknown {
		t.Fatalf("timeout: State = %s, want unknown", st)
	}
	if st := slow.States(ctx, []string{"loop-a", "loop-b"}); st["loop-a"] != loop.PaneUnknown || st["loop-b"] != loop.PaneUnknown {
		t.Fatalf("timeout: States = %v, want unknown", st)
	}
	err := slow.SpawnIn(ctx, "loop-a", loop.SpawnSpec{Argv: []string{"h", "x"}})
	var na *runner.NoAnswerError
	if !errors.As(err, &na) {
		t.Fatalf("spawn with a silent tmux = %v, want a NoAnswerError", err)
	}

	t.Setenv("PATH", t.TempDir()) // no tmux on PATH
	r := runner.New(runner.Options{Socket: "the-loop-test-never"})
	if st := r.State(ctx, "loop-a"); st != loop.PaneUnknown {
		t.Fatalf("no tmux: State = %s, want unknown", st)
	}
	_, err = r.Snapshot(ctx, "loop-a")
	if err == nil || !strings.Contains(err.Error(), "tmux not found on PATH") || !strings.Contains(err.Error(), "apt-get install tmux") ||
		!strings.Contains(err.Error(), "brew install tmux") {
		t.Fatalf("no tmux: Snapshot = %v, want the install hint", err)
	}
	// The missing binary is a typed error, and Available
	// names it before any command runs.
	var nf *runner.TmuxNotFoundError
	if !errors.As(err, &nf) || nf.Binary != "tmux" {
		t.Fatalf("no tmux: Snapshot = %#v, want a *TmuxNotFoundError", err)
	}
	if err := r.Available(); !errors.As(err, &nf) {
		t.Fatalf("no tmux: Available = %v, want a *TmuxNotFoundError", err)
	}
	if err := slow.Available(); err != nil {
		t.Fatalf("a Commander of the caller's answers for itself: Available = %v", err)
	}
}

func TestStates_AnswersForManyTargetsWithOneCall(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	counter := &countingCommander{}
	r := newRunner(t, socket, func(o *runner.Options) { o.Cmd = counter })
	ctx := context.Background()
	targets := []string{"loop-live", "loop-dead", "loop-absent", "loop-live-x"}
	if st := r.States(ctx, targets); !allEqual(st, targets, loop.PaneAbsent) {
		t.Fatalf("no server: States = %v, want all absent", st)
	}
	if err := r.SpawnIn(ctx, "loop-live", loop.SpawnSpec{Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	if err := r.SpawnIn(ctx, "loop-dead", loop.SpawnSpec{Argv: []string{"sh", "-c", "exit 0"}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, "loop-dead", loop.PaneDead)
	before := counter.n.Load()
	got := r.States(ctx, targets)
	want := map[string]loop.PaneState{"loop-live": loop.PaneLive, "loop-dead": loop.PaneDead,
		"loop-absent": loop.PaneAbsent, "loop-live-x": loop.PaneAbsent}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("States = %v, want %v", got, want)
	}
	if n := counter.n.Load() - before; n != 1 {
		t.Fatalf("States ran %d tmux commands, want 1", n)
	}
}

func allEqual(m map[string]loop.PaneState, keys []string, want loop.PaneState) bool {
	for _, k := range keys {
		if m[k] != want {
			return false
		}
	}
	return len(m) == len(keys)
}

func TestSpawnIn_RefusesLiveAndReplacesDead(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	first := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-x", first)
	pid := first.WaitForKind(t, "start", 10*time.Second).Pid

	err := r.SpawnIn(ctx, "loop-standing-x", loop.SpawnSpec{Argv: []string{"sleep", "60"}})
	if !errors.Is(err, runner.ErrSessionLive) || loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("spawn over a live session = %v, want EINVALID ErrSessionLive", err)
	}
	if testkit.ProcessGone(pid) {
		t.Fatal("a refused spawn touched the live harness")
	}
	if err := r.TerminateHarnessIn(ctx, "loop-standing-x", "standing:x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	second := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-x", second)
	second.WaitForKind(t, "start", 10*time.Second)
	waitState(t, r, "loop-standing-x", loop.PaneLive)
}

// A spawn whose caller saw no session (Absent) does not look again, and
// still meets a session made since: a live one is refused as ever, its
// harness untouched.
func TestSpawnIn_AbsentSkipsTheLookAndStillRefusesALiveSession(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	first := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-a", first)
	pid := first.WaitForKind(t, "start", 10*time.Second).Pid
	err := r.SpawnIn(context.Background(), "loop-standing-a", loop.SpawnSpec{Argv: []string{"sleep", "60"}, Absent: true})
	if !errors.Is(err, runner.ErrSessionLive) {
		t.Fatalf("an Absent spawn over a live session = %v, want ErrSessionLive", err)
	}
	if testkit.ProcessGone(pid) {
		t.Fatal("a refused spawn touched the live harness")
	}
	if err := r.SpawnIn(context.Background(), "loop-standing-b", loop.SpawnSpec{Argv: []string{"sleep", "60"}, Absent: true}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, "loop-standing-b", loop.PaneLive)
}

func TestSpawnIn_LongArgvGoesThroughTheLauncher(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	prompt := strings.Repeat("a long boot prompt; ", 2000) + "end;" // 40 KB
	spec := loop.SpawnSpec{Argv: []string{agent.Path(), "--session-id", "long", prompt}, Cwd: agent.Dir()}

	plain := newRunner(t, socket)
	err = plain.SpawnIn(context.Background(), "loop-long", spec)
	if !errors.Is(err, runner.ErrArgvTooLong) || !strings.Contains(err.Error(), "at most 12288") {
		t.Fatalf("without a launcher: %v, want the limit named", err)
	}

	r := newRunner(t, socket, func(o *runner.Options) { o.Launcher = []string{"env", launchEnv + "=1", self} })
	if err := r.SpawnIn(context.Background(), "loop-long", spec); err != nil {
		t.Fatal(err)
	}
	start := agent.WaitForKind(t, "start", 10*time.Second)
	if !reflect.DeepEqual(start.Argv, spec.Argv[1:]) || start.Cwd != spec.Cwd {
		t.Fatalf("launched argv differs (%d args, cwd %q)", len(start.Argv), start.Cwd)
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "the-loop-exec-*.json"))
	for _, f := range left {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), agent.Path()) {
			t.Fatalf("launch file %s was not removed", f)
		}
	}
}

// TestSpawnIn_ExplicitEnvIgnoresTheServersGlobalEnvironment is a
// secret's leak at the runner: a tmux server that already runs and whose global
// environment holds a secret gives it to a pane — but not to a harness
// spawned with an explicit environment.
func TestSpawnIn_ExplicitEnvIgnoresTheServersGlobalEnvironment(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", "operator", "sleep", "300"); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.TmuxRun(socket, "set-environment", "-g", "THE_LOOP_SLACK_BOT_TOKEN", "xoxb-leaked"); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, socket, func(o *runner.Options) { o.Launcher = testkit.Launcher(t) })

	// Without an explicit environment the pane inherits the server's.
	leaky := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-leaky", leaky)
	if got := leaky.WaitForKind(t, "start", 10*time.Second).Env["THE_LOOP_SLACK_BOT_TOKEN"]; got != "xoxb-leaked" {
		t.Fatalf("control: the server's global variable is %q in a plain pane; the test does not reproduce the leak", got)
	}

	agent := testkit.FakeAgent(t, testkit.Delay(0))
	env := append(os.Environ(), "THE_LOOP_AGENT_TOKEN=agent-credential")
	spec := loop.SpawnSpec{Argv: []string{agent.Path(), "--session-id", "env", "--", "-prompt"}, Cwd: agent.Dir(), Env: env}
	if err := r.SpawnIn(context.Background(), "loop-standing-env", spec); err != nil {
		t.Fatal(err)
	}
	start := agent.WaitForKind(t, "start", 10*time.Second)
	if v, ok := start.Env["THE_LOOP_SLACK_BOT_TOKEN"]; ok {
		t.Fatalf("the server's secret reached the agent: %q", v)
	}
	if start.Env["THE_LOOP_AGENT_TOKEN"] != "agent-credential" || start.Env["TMUX_PANE"] == "" || start.Env["TERM"] == "" {
		t.Fatalf("agent env %v", start.Env)
	}
	if start.Prompt != "-prompt" {
		t.Fatalf("prompt %q", start.Prompt)
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(start.Pid), "environ"))
	if err == nil && strings.Contains(string(data), "xoxb-leaked") {
		t.Fatal("/proc/<pid>/environ holds the server's secret")
	}
}
