package loop

import (
	"context"
	"io"
	"time"
)

// PaneState is what tmux says of a target: silence is not absence.
type PaneState string

// Pane states (original §2.2).
const (
	PaneLive    PaneState = "live"    // a pane whose process runs
	PaneDead    PaneState = "dead"    // the session exists, its agent pane is dead (remain-on-exit)
	PaneAbsent  PaneState = "absent"  // tmux answered: no such session (or no server)
	PaneUnknown PaneState = "unknown" // tmux did not answer
)

// LiveOrUnknown reports whether a state must be treated as occupied.
func (s PaneState) LiveOrUnknown() bool { return s == PaneLive || s == PaneUnknown }

// SpawnSpec is what to run in a new tmux session: Argv[0] is the harness
// binary (resolved), the rest its arguments, exactly as the adapter built them.
type SpawnSpec struct {
	Argv []string
	Cwd  string
	// Tag marks the tmux session as the-loop's (the conversation id it was
	// spawned for): the-loop adopts or signals a live session only when its
	// tag is the one its record expects.
	Tag string
	// Env, when not nil, is the agent's whole environment ("K=V" entries):
	// the pane's process gets exactly these (plus the terminal variables
	// tmux sets for the pane: TERM, TMUX, TMUX_PANE, COLORTERM,
	// TERM_PROGRAM, TERM_PROGRAM_VERSION), never the tmux server's global
	// environment. It can hold the agent's credential, so the runner never
	// puts it on a command line. Nil inherits what tmux gives the pane.
	Env []string
}

// PaneSnapshot is what a readiness check looks at.
type PaneSnapshot struct {
	Screen    string // capture-pane text
	Canonical bool   // the pane's tty is in canonical (cooked) mode
	Dead      bool
}

// Runner is the tmux seam: target-addressed operations and the work-item
// entry points built on them (WorkItemRunner), so a service that holds a
// Runner holds both by type. Only package runner implements it against
// tmux.
type Runner interface {
	WorkItemRunner
	// State probes one target.
	State(ctx context.Context, target string) PaneState
	// States probes many targets with one tmux query.
	States(ctx context.Context, targets []string) map[string]PaneState
	// SpawnIn creates target and starts spec in it, keeping a dead pane.
	SpawnIn(ctx context.Context, target string, spec SpawnSpec) error
	// DeliverTo pastes text (bracketed) and submits it.
	DeliverTo(ctx context.Context, target string, text io.Reader) error
	// KillTarget kills the tmux session.
	KillTarget(ctx context.Context, target string) error
	// TerminateHarnessIn ends the pane's process tree: SIGTERM, SIGKILL after grace.
	TerminateHarnessIn(ctx context.Context, target, label string, grace time.Duration) error
	// Snapshot reads the pane for a readiness check.
	Snapshot(ctx context.Context, target string) (PaneSnapshot, error)
	// Tag returns the tag SpawnIn set on target ("" when it has none, or
	// the session is not there); ok is false when tmux did not answer.
	Tag(ctx context.Context, target string) (tag string, ok bool)
}

// PaneCapturer is the optional read side of a Runner: a runner that can
// capture a pane's last lines, history included, implements it too
// (runner.Tmux and its cache do). A runner without it is peeked at
// through Snapshot: the visible screen only.
type PaneCapturer interface {
	// Capture returns the last n lines of target's agent pane, oldest
	// first, trailing blank lines left out. A missing session is ENOTFOUND.
	Capture(ctx context.Context, target string, n int) ([]string, error)
}

// Clock is the injected time source.
type Clock func() time.Time
