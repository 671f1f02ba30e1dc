package loop

import "fmt"

// Restart policies of a standing session (an entry's or a create's
// `restart`, defaulting to standingSessions.restart.policy): what the
// service's supervisor does when the agent's pane dies.
const (
	// RestartOnFailure restarts after a non-zero exit or a signal, not
	// after exit 0.
	RestartOnFailure = "on-failure"
	// RestartAlways restarts whatever the exit.
	RestartAlways = "always"
	// RestartNever leaves a dead agent dead.
	RestartNever = "never"
)

// StatusFailed is the stored status of a standing session the supervisor
// gave up on: more than standingSessions.restart.burst restarts within
// intervalSeconds. `the-loop status` exits 1 for it; `standing start NAME`
// clears it.
const StatusFailed = "failed"

// ValidRestartPolicy reports whether p is a restart policy ("" is not: it
// means "inherit" where a definition carries it).
func ValidRestartPolicy(p string) bool {
	return p == RestartOnFailure || p == RestartAlways || p == RestartNever
}

// ExitInfo is how a standing session's agent last ended, as tmux reported
// it: Code is the exit status (nil when a signal ended it or tmux did not
// say), Signal the signal's name ("" when none), At when the supervisor
// saw the pane dead (RecordTimeFormat).
type ExitInfo struct {
	Code   *int   `json:"code"`
	Signal string `json:"signal"`
	At     string `json:"at"`
}

// Failure reports whether the exit counts as a failure for on-failure: a
// signal, a non-zero status, or a status tmux never reported.
func (e *ExitInfo) Failure() bool {
	return e == nil || e.Signal != "" || e.Code == nil || *e.Code != 0
}

// String words the exit for a person: "exited with status 1", "ended by
// signal SIGKILL", "exited (tmux did not report a status)".
func (e *ExitInfo) String() string {
	switch {
	case e == nil:
		return "never seen exiting"
	case e.Signal != "":
		return "ended by signal " + e.Signal
	case e.Code != nil:
		return fmt.Sprintf("exited with status %d", *e.Code)
	}
	return "exited (tmux did not report a status)"
}

// Down is why a standing session last went down: Why is a sentence (its
// start failed: …, stopped by an operator's stop, exited with status 1), At
// when (RecordTimeFormat).
type Down struct {
	Why string `json:"why"`
	At  string `json:"at"`
}

// PaneInfo is one target's state with, for a dead pane, its exit status or
// the name of the signal that ended it (SIGKILL) where tmux reports them
// (Code nil and Signal "": not reported).
type PaneInfo struct {
	State  PaneState
	Code   *int
	Signal string
}
