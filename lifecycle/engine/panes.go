package engine

import (
	"context"
	"fmt"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Probe asks tmux for target's state before a decision that depends on it.
// A tmux that does not answer (a timeout under load) is asked twice more
// before the answer stands: silence is never taken for absence, but one
// slow reply should not fail a start.
func Probe(ctx context.Context, runner loop.Runner, target string) loop.PaneState {
	state := runner.State(ctx, target)
	for try := 0; try < 2 && state == loop.PaneUnknown; try++ {
		select {
		case <-ctx.Done():
			return state
		case <-time.After(250 * time.Millisecond):
		}
		state = runner.State(ctx, target)
	}
	return state
}

// survives polls a resumed pane for the probe window: dead or gone at any
// point fails at once (claude --resume on an unknown id exits fast). The
// polls of concurrent probes on one socket share their tmux queries
// (probes.go).
func (e *Engine) survives(ctx context.Context, runner loop.Runner, socket, target string, probe time.Duration) bool {
	deadline := time.Now().Add(probe)
	for {
		if !e.probes.paneState(ctx, runner, socket, target).LiveOrUnknown() {
			return false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(left, nextProbe(time.Now()))):
		}
	}
}

// clearOwn clears what is left of a resume that failed its probe: a dead
// pane (nothing runs in it: the fresh spawn respawns into it, like any dead
// pane before a spawn), or
// a live one only when it is the pane the-loop spawned for conversation id
// (its tag) — a live tmux session someone else put under the name meanwhile
// is never killed. It returns "" when the name is free for a fresh spawn,
// else why not.
func clearOwn(ctx context.Context, runner loop.Runner, target, id string) string {
	switch runner.State(ctx, target) {
	case loop.PaneAbsent:
		return ""
	case loop.PaneDead:
		return "" // the fresh spawn respawns into the dead pane, other windows kept
	}
	mine, err := Ours(ctx, runner, target, id)
	if err != nil {
		return loop.ErrorMessage(err)
	}
	if !mine {
		return fmt.Sprintf("the resumed pane did not survive the probe, and tmux session %s is not the one the-loop spawned; not touching it", target)
	}
	return killed(ctx, runner, target)
}

// killed kills target for clearOwn: "" once it is gone, else why not.
func killed(ctx context.Context, runner loop.Runner, target string) string {
	if err := runner.KillTarget(ctx, target); err != nil && runner.State(ctx, target) != loop.PaneAbsent {
		return fmt.Sprintf("the resumed pane did not survive the probe and tmux session %s could not be cleared (%v); not spawning over it", target, err)
	}
	return ""
}

// Ours reports whether the tmux session target is the one the-loop spawned
// for conversation id (its tag, see loop.SpawnSpec.Tag). tmux not answering
// is an error: never adopt or signal on a guess.
func Ours(ctx context.Context, runner loop.Runner, target, id string) (bool, error) {
	tag, ok := runner.Tag(ctx, target)
	if !ok {
		return false, loop.Internal("tmux did not answer whose session %s is; not touching it", target)
	}
	return id != "" && tag == id, nil
}

// Seen is one look at a session's agent pane (Runner.Snapshot, one tmux
// call): whether its agent runs, whether it is the one the-loop spawned for
// a conversation (its tag, as Ours reads it), and the snapshot itself, the
// first poll of a readiness check.
type Seen struct {
	Snap       loop.PaneSnapshot
	Live, Ours bool
}

// LookAt looks at target once for conversation id. A session that is not
// there, or whose agent exited, is not Live; tmux not answering is an
// error, as in Ours: never adopt or paste on a guess.
func LookAt(ctx context.Context, runner loop.Runner, target, id string) (Seen, error) {
	snap, err := runner.Snapshot(ctx, target)
	switch {
	case loop.ErrorCode(err) == loop.ENOTFOUND:
		return Seen{}, nil
	case err != nil:
		return Seen{}, err
	}
	return Seen{Snap: snap, Live: !snap.Dead, Ours: id != "" && snap.Tag == id}, nil
}

// NotOurs is the refusal for a live tmux session the-loop cannot account
// for: it names how to inspect it, and never offers to kill it for you.
func NotOurs(target, socket, why string) string {
	t := loop.TmuxCommand(socket)
	return fmt.Sprintf("a tmux session named %[1]s exists but %[3]s — inspect it with `%[2]s attach -r -t %[1]s`, then either `%[2]s kill-session -t =%[1]s` or leave it be", target, t, why)
}
