package runner

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Poll cadence of TerminateHarnessIn.
const (
	terminatePoll = 100 * time.Millisecond
	killWait      = 2 * time.Second // how long SIGKILL gets to take effect
	settlePoll    = 20 * time.Millisecond
	settleWait    = 2 * time.Second // how long tmux gets to see the panes die
)

// Proc identifies a process: its pid and start time, so a pid the kernel
// has reused is never signalled.
type Proc struct {
	Pid   int
	Start uint64
}

// Processes is the seam TerminateHarnessIn reads and signals processes
// through (default: /proc and kill(2)).
type Processes interface {
	// Tree returns the live processes rooted at pids: each pid and all its
	// descendants, whatever their process group or session.
	Tree(pids []int) []Proc
	// Alive reports whether p still runs; a zombie is gone.
	Alive(p Proc) bool
	// Signal sends sig to p; a process already gone is not an error.
	Signal(p Proc, sig syscall.Signal) error
}

// KillTarget kills target's tmux session (kill-session). A session that does
// not exist is ENOTFOUND wrapping ErrNoSession.
func (t *Tmux) KillTarget(ctx context.Context, target string) error {
	if err := guard(target); err != nil {
		return err
	}
	if err := t.kill(ctx, target); err != nil {
		return tmuxFailed(target, "kill", err)
	}
	return nil
}

// kill runs kill-session on target. One that got no answer is not repeated
// blindly: has-session says whether it took — a session gone is success —
// and only a session still there is killed once more, its being gone by
// then success too. A session tmux says does not exist is its answer
// (sessionGone), left to the caller.
func (t *Tmux) kill(ctx context.Context, target string) error {
	err := t.do(ctx, "kill-session", "-t", sessionTarget(target))
	if err == nil || !t.askAgain(ctx, err) {
		return err
	}
	switch t.presence(ctx, target) {
	case loop.PaneAbsent:
		t.log.Info("a kill-session that got no answer took effect", "target", target, "error", err)
		return nil
	case loop.PaneUnknown:
		return err
	}
	t.log.Info("a kill-session that got no answer left the session; killing it once more", "target", target, "error", err)
	if err := t.do(ctx, "kill-session", "-t", sessionTarget(target)); err != nil && !sessionGone(err) {
		return err
	}
	return nil
}

// TerminateHarnessIn ends the harness's process tree (original §2.5, decisions D12):
// it keeps the agent's pane (remain-on-exit on its window), collects the
// pid of every live pane of the session — the agent's and any an operator
// opened, all of which the kill-session that follows a stop would end
// anyway — and every descendant, sends them all SIGTERM, waits up to grace
// for them to go (polling every 100ms; grace 0 escalates at once), then
// SIGKILLs what is left. label names what the target belongs to in the
// refusal log. A session already gone is success; processes that survive
// SIGKILL are an error wrapping ErrStillRunning. The session itself is left
// for KillTarget. A ctx cancelled during the grace escalates at once, and
// the wait after SIGKILL still runs (cleanupCtx).
func (t *Tmux) TerminateHarnessIn(ctx context.Context, target, label string, grace time.Duration) error {
	if target == "" {
		return nil
	}
	if err := guard(target); err != nil {
		t.log.Warn("refusing to terminate processes in tmux target "+strconv.Quote(target)+" for "+label+
			": not a the-loop `loop-<slug>` session", "target", target, "label", label)
		return err
	}
	if _, err := t.probe(ctx, "has-session", "-t", sessionTarget(target)); err != nil {
		if absentAnswer(err) {
			t.log.Info("tmux session is already gone", "target", target, "label", label)
			return nil
		}
		return fail(loop.EINTERNAL, err, "could not terminate the harness in %s: %v", target, err)
	}
	if err := t.set(ctx, "set-option", "-w", "-t", agentWindow(target), "remain-on-exit", "on"); err != nil {
		t.log.Warn("could not keep the pane of a terminated harness", "target", target, "error", err)
	}
	pids, err := t.livePanePids(ctx, target)
	if err != nil {
		if absentAnswer(err) {
			return nil // the session went away meanwhile
		}
		return fail(loop.EINTERNAL, err, "could not terminate the harness in %s: %v", target, err)
	}
	if len(pids) == 0 {
		return nil
	}
	procs := t.opt.Procs.Tree(pids)
	t.signalAll(target, procs, syscall.SIGTERM)
	for waited := time.Duration(0); waited < grace; waited += terminatePoll {
		procs = t.survivors(procs)
		if len(procs) == 0 {
			break
		}
		if err := t.opt.Sleep(ctx, min(terminatePoll, grace-waited)); err != nil {
			break
		}
	}
	// From here on it is clean-up: it runs even when ctx is done.
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	procs = t.survivors(procs)
	if len(procs) == 0 {
		t.settle(cctx, target)
		return nil
	}
	t.log.Warn("harness did not end on SIGTERM; sending SIGKILL", "target", target, "label", label,
		"grace", grace, "pids", pidsOf(procs))
	t.signalAll(target, procs, syscall.SIGKILL)
	for waited := time.Duration(0); ; waited += 20 * time.Millisecond {
		procs = t.survivors(procs)
		if len(procs) == 0 {
			t.settle(cctx, target)
			return nil
		}
		if waited >= killWait || t.opt.Sleep(cctx, 20*time.Millisecond) != nil {
			break
		}
	}
	return fail(loop.EINTERNAL, ErrStillRunning, "harness in %s is still running after SIGKILL (pids %v)",
		target, pidsOf(procs))
}

// settle waits (up to settleWait) for tmux to see the agent's pane die, so
// a State right after a terminate reads dead: tmux notices when the pane's
// tty closes, a moment after the processes are gone.
func (t *Tmux) settle(ctx context.Context, target string) {
	for waited := time.Duration(0); ; waited += settlePoll {
		dead, err := t.agentDead(ctx, target)
		if err != nil || dead {
			return
		}
		if waited >= settleWait || t.opt.Sleep(ctx, settlePoll) != nil {
			t.log.Warn("tmux still shows a live pane after its processes ended", "target", target)
			return
		}
	}
}

// livePanePids lists the pids of the session's panes whose process runs.
func (t *Tmux) livePanePids(ctx context.Context, target string) ([]int, error) {
	out, err := t.probe(ctx, "list-panes", "-s", "-t", sessionTarget(target), "-F", "#{pane_pid} #{pane_dead}")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[1] == "1" {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// survivors returns the processes of procs still alive, plus any new
// descendants they started meanwhile.
func (t *Tmux) survivors(procs []Proc) []Proc {
	var alive []Proc
	var roots []int
	have := map[Proc]bool{}
	for _, p := range procs {
		if t.opt.Procs.Alive(p) {
			alive = append(alive, p)
			roots = append(roots, p.Pid)
			have[p] = true
		}
	}
	if len(roots) == 0 {
		return nil
	}
	for _, p := range t.opt.Procs.Tree(roots) {
		if !have[p] {
			alive = append(alive, p)
			have[p] = true
		}
	}
	return alive
}

// signalAll sends sig to every process, logging (not failing on) refusals.
func (t *Tmux) signalAll(target string, procs []Proc, sig syscall.Signal) {
	for _, p := range procs {
		if err := t.opt.Procs.Signal(p, sig); err != nil {
			lvl := "could not signal a harness process"
			if errors.Is(err, syscall.EPERM) {
				lvl = "not permitted to signal a harness process"
			}
			t.log.Warn(lvl, "target", target, "pid", p.Pid, "signal", sig.String(), "error", err)
		}
	}
}

// pidsOf lists the pids of procs.
func pidsOf(procs []Proc) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.Pid
	}
	return out
}
