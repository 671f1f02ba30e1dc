package loop

import (
	"context"
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
	// Absent says the caller has just seen no tmux session named target
	// (its own probe): the spawn creates it without looking again, and a
	// session made since is met as new-session's "duplicate session".
	Absent bool
}

// PaneSnapshot is what a readiness check looks at.
type PaneSnapshot struct {
	Screen    string // capture-pane text
	Canonical bool   // the pane's tty is in canonical (cooked) mode
	Dead      bool
	Tag       string // the tag SpawnIn set on the session (Runner.Tag), read in the same look
}

// Runner is the tmux seam: every tmux capability the service uses, so a
// service that holds a Runner holds them all by type, and no caller asks a
// runner at run time what else it can do. Its parts are the work-item entry
// points (WorkItemRunner), the target-addressed operations below, what a
// pane's processes are (PaneProcesses) and what a pane shows
// (PaneCapturer). Only package runner implements it against tmux; a fake
// implements each part as a runner without it would behave.
type Runner interface {
	WorkItemRunner
	PaneProcesses
	PaneCapturer
	// State probes one target.
	State(ctx context.Context, target string) PaneState
	// States probes many targets with one tmux query.
	States(ctx context.Context, targets []string) map[string]PaneState
	// PaneStates is States with, for each dead agent pane, the exit status
	// or signal tmux reports (a runner that cannot tell gives states only).
	PaneStates(ctx context.Context, targets []string) map[string]PaneInfo
	// SpawnIn creates target and starts spec in it, keeping a dead pane.
	SpawnIn(ctx context.Context, target string, spec SpawnSpec) error
	// DeliverTo pastes text (bracketed) and submits it, with at least
	// submitDelay between the paste and the submit key (0: the runner's
	// own delay; a longer one of the runner's wins).
	DeliverTo(ctx context.Context, target, text string, submitDelay time.Duration) error
	// SubmitTo presses the submit key once more in target's agent pane:
	// for a say whose first submit left no evidence.
	SubmitTo(ctx context.Context, target string) error
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

// PaneProcesses is the part of a Runner that names the processes tmux
// started in panes: the roots of the trees an id capture searches and a
// hook's or a socket peer's parent chain must reach.
type PaneProcesses interface {
	// PanePID returns the pid of the process tmux started in target's
	// agent pane. A missing session is ENOTFOUND.
	PanePID(ctx context.Context, target string) (int, error)
	// PanePIDs returns the pids of the live panes of tmux session target.
	PanePIDs(ctx context.Context, target string) ([]int, error)
	// AllPanePIDs returns the pids of the live panes of every session of
	// the runner's tmux server, by session name (a server that is not
	// running has none).
	AllPanePIDs(ctx context.Context) (map[string][]int, error)
}

// PaneCapturer is the read side of a Runner: a pane's last lines, history
// included (a runner that keeps no history gives the visible screen's).
type PaneCapturer interface {
	// Capture returns the last n lines of target's agent pane, oldest
	// first, trailing blank lines left out. A missing session is ENOTFOUND.
	Capture(ctx context.Context, target string, n int) ([]string, error)
}

// Clock is the injected time source.
type Clock func() time.Time

// PaneInfo is one target's state with, for a dead pane, its exit status or
// the name of the signal that ended it (SIGKILL) where tmux reports them
// (Code nil and Signal "": not reported).
type PaneInfo struct {
	State  PaneState
	Code   *int
	Signal string
}
