package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// silentOnce runs real tmux, except that the first call of verb gets no
// answer, as from a tmux client on a loaded host: with ran, the command runs
// first (its effect happens, its answer is lost); without, it never reaches
// tmux. It counts the calls of each verb.
type silentOnce struct {
	verb string
	ran  bool

	mu    sync.Mutex
	calls map[string]int
}

func (c *silentOnce) Run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	v := tmuxVerb(args)
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[v]++
	silent := v == c.verb && c.calls[v] == 1
	c.mu.Unlock()
	if !silent {
		return runner.ExecCommander{}.Run(ctx, args, stdin)
	}
	if c.ran {
		_, _ = runner.ExecCommander{}.Run(ctx, args, stdin)
	}
	return nil, &runner.NoAnswerError{Args: args, Err: context.DeadlineExceeded}
}

// count returns how often verb was run.
func (c *silentOnce) count(verb string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[verb]
}

// tmuxVerb is the tmux command in args, after the global flags.
func tmuxVerb(args []string) string {
	for len(args) >= 2 && (args[0] == "-L" || args[0] == "-f") {
		args = args[2:]
	}
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// silentRunner is a runner on socket whose first call of verb gets no answer.
func silentRunner(t *testing.T, socket, verb string, ran bool) (*runner.Tmux, *silentOnce) {
	c := &silentOnce{verb: verb, ran: ran}
	return newRunner(t, socket, func(o *runner.Options) { o.Cmd = c }), c
}

var sleeper = loop.SpawnSpec{Argv: []string{"sleep", "600"}, Tag: "conv-1;x"}

func TestQueries_WithNoAnswerAreAskedOnceMore(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	ctx := context.Background()
	if err := newRunner(t, socket).SpawnIn(ctx, "loop-q", sleeper); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(r *runner.Tmux) error{
		"has-session": func(r *runner.Tmux) error {
			return want(r.State(ctx, "loop-q") == loop.PaneLive, "State is not live")
		},
		"display-message": func(r *runner.Tmux) error {
			pid, err := r.PanePID(ctx, "loop-q")
			return errors.Join(err, want(pid > 0, "no pane pid"))
		},
		"show-options": func(r *runner.Tmux) error {
			tag, ok := r.Tag(ctx, "loop-q")
			return want(ok && tag == sleeper.Tag, "Tag = %q, %v", tag, ok)
		},
		"list-panes": func(r *runner.Tmux) error {
			st := r.States(ctx, []string{"loop-q"})
			return want(st["loop-q"] == loop.PaneLive, "States = %v", st)
		},
		"capture-pane": func(r *runner.Tmux) error {
			_, err := r.Capture(ctx, "loop-q", 10)
			return err
		},
	}
	for verb, ask := range cases {
		t.Run(verb, func(t *testing.T) {
			r, c := silentRunner(t, socket, verb, false)
			if err := ask(r); err != nil {
				t.Fatalf("with the first %s unanswered: %v", verb, err)
			}
			if n := c.count(verb); n != 2 {
				t.Fatalf("%s ran %d times, want 2 (once unanswered, once more)", verb, n)
			}
		})
	}
}

// want is nil when ok, else an error with the formatted message.
func want(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func TestKillTarget_WithNoAnswerIsCheckedNotRepeatedBlindly(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		ran   bool
		kills int
	}{
		"the kill took: has-session says gone, no second kill":       {ran: true, kills: 1},
		"the kill never ran: the session is there, killed once more": {ran: false, kills: 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			socket := testkit.Tmux(t)
			ctx := context.Background()
			if err := newRunner(t, socket).SpawnIn(ctx, "loop-k", sleeper); err != nil {
				t.Fatal(err)
			}
			if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", "loop-other", "--", "sleep", "600"); err != nil {
				t.Fatal(err) // keeps the server up once loop-k is gone
			}
			r, cmd := silentRunner(t, socket, "kill-session", c.ran)
			if err := r.KillTarget(ctx, "loop-k"); err != nil {
				t.Fatalf("KillTarget = %v, want success: the session is gone", err)
			}
			if n := cmd.count("kill-session"); n != c.kills {
				t.Fatalf("kill-session ran %d times, want %d", n, c.kills)
			}
			if cmd.count("has-session") == 0 {
				t.Fatal("the unanswered kill was not checked with has-session")
			}
			if _, err := testkit.TmuxRun(socket, "has-session", "-t", "=loop-k"); err == nil {
				t.Fatal("loop-k is still there")
			}
		})
	}
}

func TestSpawnIn_NewSessionWithNoAnswerIsCheckedNotRepeatedBlindly(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		ran  bool
		news int
	}{
		"it took: the placeholder is up, no second new-session": {ran: true, news: 1},
		"it never ran: no session, new-session once more":       {ran: false, news: 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			socket := testkit.Tmux(t)
			ctx := context.Background()
			r, cmd := silentRunner(t, socket, "new-session", c.ran)
			if err := r.SpawnIn(ctx, "loop-n", sleeper); err != nil {
				t.Fatalf("SpawnIn = %v", err)
			}
			if n := cmd.count("new-session"); n != c.news {
				t.Fatalf("new-session ran %d times, want %d", n, c.news)
			}
			if tag, ok := r.Tag(ctx, "loop-n"); !ok || tag != sleeper.Tag {
				t.Fatalf("Tag = %q, %v; the harness was not started", tag, ok)
			}
			out, err := testkit.TmuxRun(socket, "display-message", "-p", "-t", "=loop-n:^.{top-left}", "#{pane_start_command}")
			if err != nil || out != "sleep 600" {
				t.Fatalf("agent pane runs %q (%v), want the harness", out, err)
			}
		})
	}
}

func TestSpawnIn_HarnessStartWithNoAnswerIsCheckedNeverRepeated(t *testing.T) {
	t.Parallel()
	// The start list begins with set-option (remain-on-exit) and holds
	// respawn-pane -k: a repeat would kill the harness it started.
	for name, c := range map[string]struct {
		ran  bool
		spec loop.SpawnSpec
	}{
		"it took, tagged: the tag read back says so":                 {ran: true, spec: sleeper},
		"it took, untagged: the pane no longer runs the placeholder": {ran: true, spec: loop.SpawnSpec{Argv: []string{"sleep", "600"}}},
		"it never ran: the half-made session is removed":             {ran: false, spec: sleeper},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			socket := testkit.Tmux(t)
			ctx := context.Background()
			r, cmd := silentRunner(t, socket, "set-option", c.ran)
			err := r.SpawnIn(ctx, "loop-h", c.spec)
			if n := cmd.count("set-option"); n != 1 {
				t.Fatalf("the start list ran %d times, want 1: never repeated", n)
			}
			if cmd.count("respawn-pane") != 0 {
				t.Fatal("respawn-pane was run on its own")
			}
			if !c.ran {
				var na *runner.NoAnswerError
				if !errors.As(err, &na) || loop.ErrorCode(err) != loop.EINTERNAL {
					t.Fatalf("SpawnIn = %v, want EINTERNAL wrapping the NoAnswerError", err)
				}
				if st := r.State(ctx, "loop-h"); st != loop.PaneAbsent {
					t.Fatalf("State = %s, want the half-made session removed", st)
				}
				return
			}
			if err != nil {
				t.Fatalf("SpawnIn = %v, want success: the harness runs", err)
			}
			out, err := testkit.TmuxRun(socket, "display-message", "-p", "-t", "=loop-h:^.{top-left}", "#{pane_start_command} #{remain-on-exit}")
			if err != nil || out != "sleep 600 on" {
				t.Fatalf("agent pane: %q (%v), want the harness with remain-on-exit", out, err)
			}
		})
	}
}

func TestTerminateHarnessIn_RemainOnExitWithNoAnswerIsSetOnceMore(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	ctx := context.Background()
	if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", "loop-t", "--", "sleep", "600"); err != nil {
		t.Fatal(err)
	}
	r, cmd := silentRunner(t, socket, "set-option", false)
	if err := r.TerminateHarnessIn(ctx, "loop-t", "standing:t", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := cmd.count("set-option"); n != 2 {
		t.Fatalf("set-option ran %d times, want 2", n)
	}
	if st := r.State(ctx, "loop-t"); st != loop.PaneDead {
		t.Fatalf("State = %s, want dead: the pane was kept", st)
	}
}

// slowTmux writes a tmux wrapper that leaves a child holding the client's
// stdout and stderr after it exits: `sleep hold &` before exec'ing tmux. The
// child's pid goes to a file, and is killed when the test ends.
func slowTmux(t *testing.T, hold string) string {
	t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "tmux")
	body := "#!/bin/sh\nsleep " + hold + " &\necho $! >>'" + pids + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return script
}

func TestExecCommander_WaitsForOutputHeldPastTheClientsExit(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	ctx := context.Background()
	if err := newRunner(t, socket).SpawnIn(ctx, "loop-slow", sleeper); err != nil {
		t.Fatal(err)
	}
	// Each call's output ends 2 s after tmux exits: more than the fixed
	// second of grace that once cut it, less than the call's bound.
	bin := slowTmux(t, "2")
	out, err := runner.ExecCommander{Binary: bin}.Run(ctx,
		[]string{"-L", socket, "-f", testkit.TmuxConfig, "display-message", "-p", "-t", "=loop-slow:", "#{session_name}"}, nil)
	if err != nil || string(out) != "loop-slow\n" {
		t.Fatalf("Run = %q, %v; want the whole answer", out, err)
	}
	r := newRunner(t, socket, func(o *runner.Options) { o.Binary = bin })
	if st := r.State(ctx, "loop-slow"); st != loop.PaneLive {
		t.Fatalf("State = %s, want live", st)
	}
	if tag, ok := r.Tag(ctx, "loop-slow"); !ok || tag != sleeper.Tag {
		t.Fatalf("Tag = %q, %v", tag, ok)
	}
	if err := r.KillTarget(ctx, "loop-slow"); err != nil {
		t.Fatalf("KillTarget = %v", err)
	}
}

func TestExecCommander_OutputHeldPastTheDeadlineIsCutNotWaitedFor(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	if _, err := testkit.TmuxRun(socket, "new-session", "-d", "-s", "loop-held", "--", "sleep", "600"); err != nil {
		t.Fatal(err)
	}
	bin := slowTmux(t, "600")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := runner.ExecCommander{Binary: bin}.Run(ctx,
			[]string{"-L", socket, "-f", testkit.TmuxConfig, "has-session", "-t", "=loop-held"}, nil)
		done <- err
	}()
	err := testkit.Await(t, done, "Run did not return at its deadline")
	// tmux exited 0 and its output was cut at the deadline (ErrWaitDelay);
	// on a host too loaded for tmux to answer in 3 s, the deadline killed it.
	var na *runner.NoAnswerError
	if !errors.As(err, &na) || !errors.Is(err, exec.ErrWaitDelay) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want a NoAnswerError wrapping exec.ErrWaitDelay (tmux exited 0, its output cut)", err)
	}
}

func TestExecCommander_WithoutStdinTheClientReadsDevNull(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd/0"); err != nil {
		t.Skip("no /proc")
	}
	script := filepath.Join(t.TempDir(), "tmux")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nreadlink /proc/$$/fd/0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runner.ExecCommander{Binary: script}.Run(context.Background(), []string{"has-session"}, nil)
	if err != nil || strings.TrimSpace(string(out)) != "/dev/null" {
		t.Fatalf("the client's stdin is %q (%v), want /dev/null", out, err)
	}
}
