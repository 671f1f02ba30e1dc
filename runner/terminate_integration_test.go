package runner_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

func TestTerminateHarnessIn_SIGTERMLetsTheAgentFlushItsConversation(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-flush", agent)
	id := agent.WaitForKind(t, "start", 10*time.Second).SessionID
	waitReady(t, r, "loop-standing-flush")
	if err := r.DeliverTo(ctx, "loop-standing-flush", "remember this", 0); err != nil {
		t.Fatal(err)
	}
	agent.WaitForKind(t, "message", 10*time.Second)

	if err := r.TerminateHarnessIn(ctx, "loop-standing-flush", "standing:flush", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if e := agent.Entries("sigterm"); len(e) != 1 || e[0].Ignored {
		t.Fatalf("sigterm entries = %+v", e)
	}
	if msgs, ok := agent.Transcript(id); !ok || len(msgs) != 1 || msgs[0] != "remember this" {
		t.Fatalf("transcript = %q, %v; want the flushed conversation", msgs, ok)
	}
	if st := r.State(ctx, "loop-standing-flush"); st != loop.PaneDead {
		t.Fatalf("State after terminate = %s, want dead (the pane is kept)", st)
	}
	if code, err := r.ExitStatus(ctx, "loop-standing-flush"); err != nil || code != 0 {
		t.Fatalf("ExitStatus = %d, %v; want 0", code, err)
	}

	// The flushed conversation resumes.
	spec := loop.SpawnSpec{Argv: []string{agent.Path(), "--resume", id, "welcome back"}, Cwd: agent.Dir()}
	if err := r.SpawnIn(ctx, "loop-standing-flush", spec); err != nil {
		t.Fatal(err)
	}
	agent.WaitFor(t, func(e testkit.Entry) bool { return e.Kind == "start" && e.Resume }, 10*time.Second)
	// The fake checks the conversation before it draws its prompt: a prompt
	// means the resume was taken.
	waitReady(t, r, "loop-standing-flush")
	if len(agent.Entries("resume_failed")) != 0 || r.State(ctx, "loop-standing-flush") != loop.PaneLive {
		t.Fatal("the resumed agent did not stay up")
	}
}

func TestKillTarget_WithoutTerminateLosesTheConversation(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-hup", agent)
	id := agent.WaitForKind(t, "start", 10*time.Second).SessionID
	if err := r.KillTarget(ctx, "loop-standing-hup"); err != nil {
		t.Fatal(err)
	}
	agent.WaitForKind(t, "sighup", 10*time.Second)
	if _, ok := agent.Transcript(id); ok {
		t.Fatal("a SIGHUPed agent flushed its transcript")
	}
	spec := loop.SpawnSpec{Argv: []string{agent.Path(), "--resume", id, "p"}, Cwd: agent.Dir()}
	if err := r.SpawnIn(ctx, "loop-standing-hup", spec); err != nil {
		t.Fatal(err)
	}
	agent.WaitForKind(t, "resume_failed", 10*time.Second)
	waitState(t, r, "loop-standing-hup", loop.PaneDead)
	if code, _ := r.ExitStatus(ctx, "loop-standing-hup"); code != 1 {
		t.Fatalf("a failed resume exited %d, want 1", code)
	}
}

func TestTerminateHarnessIn_KillsAnAgentIgnoringSIGTERMAfterTheGrace(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.IgnoreTerm())
	spawnFake(t, r, "loop-standing-stubborn", agent)
	pid := agent.WaitForKind(t, "start", 10*time.Second).Pid
	waitReady(t, r, "loop-standing-stubborn") // its signal handler is installed

	begin := time.Now()
	if err := r.TerminateHarnessIn(context.Background(), "loop-standing-stubborn", "standing:stubborn", 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 500*time.Millisecond {
		t.Fatalf("escalated after %v, before the 500ms grace", took)
	}
	if e := agent.Entries("sigterm"); len(e) != 1 || !e[0].Ignored {
		t.Fatalf("sigterm entries = %+v, want one ignored", e)
	}
	if !testkit.ProcessGone(pid) {
		t.Fatalf("agent %d still runs after SIGKILL", pid)
	}
	waitState(t, r, "loop-standing-stubborn", loop.PaneDead)
	if code, _ := r.ExitStatus(context.Background(), "loop-standing-stubborn"); code != 128+9 {
		t.Fatalf("exit status = %d, want SIGKILL (137)", code)
	}
}

func TestTerminateHarnessIn_EndsChildrenInTheirOwnProcessGroups(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(0), testkit.Children(2))
	spawnFake(t, r, "loop-standing-tree", agent)
	start := agent.WaitForKind(t, "start", 10*time.Second)
	if len(start.Children) != 2 {
		t.Fatalf("children = %v", start.Children)
	}
	for _, c := range start.Children {
		if pg := pgid(t, c); pg == pgid(t, start.Pid) {
			t.Fatalf("child %d shares the agent's process group %d", c, pg)
		}
	}
	if err := r.TerminateHarnessIn(context.Background(), "loop-standing-tree", "standing:tree", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, pid := range append([]int{start.Pid}, start.Children...) {
		if !testkit.ProcessGone(pid) {
			t.Fatalf("process %d outlived the terminate", pid)
		}
	}
}

func TestTerminateHarnessIn_RefusesForeignTargetsAndSkipsGoneOnes(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	err := r.TerminateHarnessIn(context.Background(), "my-work", "gh:o/r#1", time.Second)
	if !errors.Is(err, runner.ErrInvalidTarget) {
		t.Fatalf("foreign target: %v", err)
	}
	if err := r.TerminateHarnessIn(context.Background(), "loop-standing-none", "standing:none", time.Second); err != nil {
		t.Fatalf("a gone session: %v, want nil", err)
	}
	if err := r.TerminateHarnessIn(context.Background(), "", "", time.Second); err != nil {
		t.Fatalf("empty target: %v, want nil", err)
	}
}

// pgid reads a process's group from /proc/<pid>/stat.
func pgid(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	n, _ := strconv.Atoi(f[2])
	return n
}
