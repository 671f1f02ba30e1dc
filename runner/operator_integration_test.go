package runner_test

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// operatorPanes does what an operator attached to target might: open a
// window running cat (it becomes the session's current window), split it,
// and split the agent's own window too (the split becomes that window's
// active pane). It returns the pane ids of the three cats.
func operatorPanes(t *testing.T, socket, target string) []string {
	t.Helper()
	var ids []string
	for _, args := range [][]string{
		{"new-window", "-P", "-F", "#{pane_id}", "-t", "=" + target + ":", "--", "cat"},
		{"split-window", "-P", "-F", "#{pane_id}", "-t", "=" + target + ":", "--", "cat"},
		{"split-window", "-P", "-F", "#{pane_id}", "-t", "=" + target + ":^", "--", "cat"},
	} {
		id, err := testkit.TmuxRun(socket, args...)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestOperatorWindows_DoNotDivertWhatIsMeantForTheAgent(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	const target = "loop-standing-op"
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, target, agent)
	waitReady(t, r, target)
	start := agent.WaitForKind(t, "start", 10*time.Second)
	agentPane, err := testkit.TmuxRun(socket, "display-message", "-p", "-t", "="+target+":", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}

	cats := operatorPanes(t, socket, target)
	if cur, _ := testkit.TmuxRun(socket, "display-message", "-p", "-t", "="+target+":", "#{pane_id}"); cur != cats[1] {
		t.Fatalf("the session's current pane is %q, want the operator's %q", cur, cats[1])
	}

	// Snapshot reads the agent (a cat's tty is canonical, with no prompt).
	snap, err := r.Snapshot(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if !testkit.FakeReady(snap) || snap.Dead {
		t.Fatalf("Snapshot did not read the agent's pane: %+v", snap)
	}

	// DeliverTo reaches the agent, not a cat.
	if err := r.DeliverTo(ctx, target, "meant for the agent", 0); err != nil {
		t.Fatal(err)
	}
	if m := agent.WaitForKind(t, "message", 10*time.Second); m.Text != "meant for the agent" {
		t.Fatalf("message = %q", m.Text)
	}
	// A marker typed into each cat after the delivery: tmux hands a pane its
	// input in order and the cat's tty echoes it in order, so once the
	// marker shows, anything delivered to that pane before it shows too.
	for _, id := range cats {
		if _, err := testkit.TmuxRun(socket, "send-keys", "-t", id, "-l", "typed after the delivery"); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, func() bool {
			screen, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", id)
			return strings.Contains(screen, "typed after the delivery")
		}, 10*time.Second, "the marker never showed in the operator's pane %s", id)
	}
	for _, id := range cats {
		if screen, _ := testkit.TmuxRun(socket, "capture-pane", "-p", "-t", id); strings.Contains(screen, "meant for") {
			t.Fatalf("the operator's pane %s got the delivery: %q", id, screen)
		}
	}

	if st := r.State(ctx, target); st != loop.PaneLive {
		t.Fatalf("State = %s, want live", st)
	}

	// The agent dies; the operator's panes live on: the target reads dead.
	if err := syscall.Kill(start.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, target, loop.PaneDead)
	if st := r.States(ctx, []string{target}); st[target] != loop.PaneDead {
		t.Fatalf("States = %v, want dead", st)
	}
	if code, err := r.ExitStatus(ctx, target); err != nil || code != 128+int(syscall.SIGKILL) {
		t.Fatalf("ExitStatus = %d, %v; want 137", code, err)
	}
	panes, err := testkit.TmuxRun(socket, "list-panes", "-s", "-t", "="+target, "-F", "#{pane_id} #{pane_dead}")
	if err != nil {
		t.Fatal(err)
	}
	want := agentPane + " 1\n" + cats[2] + " 0\n" + cats[0] + " 0\n" + cats[1] + " 0"
	if panes != want {
		t.Fatalf("panes:\n%s\nwant\n%s", panes, want)
	}
}

func TestTerminateHarnessIn_WithOperatorWindowsLeavesTheAgentsPaneDead(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	const target = "loop-standing-opstop"
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, target, agent)
	waitReady(t, r, target)
	operatorPanes(t, socket, target)

	if err := r.TerminateHarnessIn(ctx, target, "standing:opstop", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	agent.WaitForKind(t, "sigterm", 5*time.Second)
	if st := r.State(ctx, target); st != loop.PaneDead {
		t.Fatalf("State right after terminate = %s, want dead", st)
	}
	// Every pane's tree was ended: the operator's window closed, the
	// agent's window (remain-on-exit) keeps its two dead panes.
	var out string
	testkit.Eventually(t, func() bool {
		out, _ = testkit.TmuxRun(socket, "list-panes", "-s", "-t", "="+target, "-F", "#{window_index} #{pane_dead}")
		return out == "0 1\n0 1"
	}, 5*time.Second, "the operator's panes outlived the terminate: %q", out)
}

func TestTag_ReadsWhatSpawnInSet(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	check := func(target, wantTag string, wantOK bool) {
		t.Helper()
		if tag, ok := r.Tag(ctx, target); tag != wantTag || ok != wantOK {
			t.Fatalf("Tag(%s) = %q, %v; want %q, %v", target, tag, ok, wantTag, wantOK)
		}
	}
	check("loop-tagged", "", true) // no server

	if err := r.SpawnIn(ctx, "loop-tagged", loop.SpawnSpec{Argv: []string{"sleep", "60"},
		Tag: "6f1c1b1e-0000-4000-8000-000000000001;#{session_name}"}); err != nil {
		t.Fatal(err)
	}
	if err := r.SpawnIn(ctx, "loop-untagged", loop.SpawnSpec{Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", "loop-tagged-foreign", "--", "sleep", "60"); err != nil {
		t.Fatal(err)
	}
	check("loop-tagged", "6f1c1b1e-0000-4000-8000-000000000001;#{session_name}", true)
	check("loop-untagged", "", true)
	check("loop-tagged-foreign", "", true) // not the-loop's, though its name says so
	check("loop-tag", "", true)            // no such session; exact, not a prefix of loop-tagged
	if opt, _ := testkit.TmuxRun(socket, "show-options", "-g", "@the-loop-tag"); opt != "" {
		t.Fatalf("the tag leaked into the global options: %q", opt)
	}

	slow := runner.New(runner.Options{Socket: socket, Cmd: hanging{}, ProbeTimeout: 50 * time.Millisecond})
	if tag, ok := slow.Tag(ctx, "loop-tagged"); tag != "" || ok {
		t.Fatalf("Tag with a silent tmux = %q, %v; want \"\", false", tag, ok)
	}
}

// cancelOnCall runs real tmux and cancels a ctx once call number n (from 1)
// has answered.
type cancelOnCall struct {
	n      int32
	calls  atomic.Int32
	cancel context.CancelFunc
}

func (c *cancelOnCall) Run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	out, err := runner.ExecCommander{}.Run(ctx, args, stdin)
	if c.calls.Add(1) == c.n {
		c.cancel()
	}
	return out, err
}

func TestDeliverTo_CancelledMidwayLeavesNoBufferBehind(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	const target = "loop-standing-cancel"
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, newRunner(t, socket), target, agent)
	waitReady(t, newRunner(t, socket), target)

	// The calls of a delivery: 1 the paste list (copy-mode, load the text,
	// paste it), 2 the submit list; cancelled after the first, between the
	// paste and the submit.
	for _, n := range []int32{1} {
		ctx, cancel := context.WithCancel(context.Background())
		cmd := &cancelOnCall{n: n, cancel: cancel}
		r := newRunner(t, socket, func(o *runner.Options) { o.Cmd = cmd })
		err := r.DeliverTo(ctx, target, "cut short", 0)
		cancel()
		if err == nil {
			t.Fatalf("cancelled after call %d: DeliverTo succeeded", n)
		}
		if bufs, err := testkit.TmuxRun(socket, "list-buffers", "-F", "#{buffer_name}"); err != nil || bufs != "" {
			t.Fatalf("cancelled after call %d: tmux buffers left behind: %q (%v)", n, bufs, err)
		}
	}
}
