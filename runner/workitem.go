package runner

import (
	"context"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// The work-item entry points (original §2.7): each keeps what is
// particular to a work item — its tmux name, its refusals, its label — and
// delegates to the target-addressed operation, so a work item's session
// gets byte-for-byte the tmux commands a standing session gets.

// Spawn starts spec in the work item's tmux session: SpawnIn on
// item.TmuxTarget() ("loop-<slug>").
func (t *Tmux) Spawn(ctx context.Context, item loop.WorkItemRef, spec loop.SpawnSpec) error {
	return t.SpawnIn(ctx, item.TmuxTarget(), spec)
}

// Deliver pastes text into a work item's session. It refuses (ENOTFOUND
// wrapping ErrNoSession, no tmux call) a session with no recorded tmux
// session, and (after probing it) one whose tmux session is gone or whose
// harness has exited; then it is DeliverTo, submitDelay as there. A probe
// tmux does not answer counts as live: the paste is tried and fails on its
// own if need be.
func (t *Tmux) Deliver(ctx context.Context, sess loop.WorkItemTarget, text string, submitDelay time.Duration) error {
	if sess.TmuxTarget == "" {
		return fail(loop.ENOTFOUND, ErrNoSession,
			"no tmux session recorded for %s; nothing to deliver into — start its session first", sess.Ref)
	}
	if !t.State(ctx, sess.TmuxTarget).LiveOrUnknown() {
		return fail(loop.ENOTFOUND, ErrNoSession,
			"tmux session %s not found or its harness has exited (crashed, killed, or a retained dead pane); nothing was delivered",
			sess.TmuxTarget)
	}
	return t.DeliverTo(ctx, sess.TmuxTarget, text, submitDelay)
}

// Kill kills the work item's tmux session: KillTarget on its recorded
// target.
func (t *Tmux) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	return t.KillTarget(ctx, sess.TmuxTarget)
}

// TerminateHarness ends the process tree of the work item's pane:
// TerminateHarnessIn on its recorded target, labelled with its ref. An
// empty target is a no-op.
func (t *Tmux) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	return t.TerminateHarnessIn(ctx, sess.TmuxTarget, sess.Ref, grace)
}
