package runner

import (
	"errors"
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
)

// Causes wrapped by the runner's *loop.Error values; test them with
// errors.Is. tmux's own failures are wrapped as *ExitError (it answered)
// or *NoAnswerError (it did not).
var (
	// ErrInvalidTarget: the target is not a the-loop session name (EINVALID).
	ErrInvalidTarget = errors.New("not a the-loop tmux session name")
	// ErrSessionLive: a spawn found the target's harness still running (EINVALID).
	ErrSessionLive = errors.New("tmux session is live")
	// ErrSessionOccupied: a spawn found the target present and could not clear it (EINVALID).
	ErrSessionOccupied = errors.New("tmux session could not be cleared")
	// ErrNoSession: tmux says the target does not exist (ENOTFOUND).
	ErrNoSession = errors.New("no such tmux session")
	// ErrArgvTooLong: the harness argv exceeds a tmux or kernel limit (EINVALID).
	ErrArgvTooLong = errors.New("harness argv too long")
	// ErrNotReady: the agent's prompt did not come up in time (EINTERNAL).
	ErrNotReady = errors.New("agent not ready for input")
	// ErrAgentExited: the pane's process has exited (EINTERNAL).
	ErrAgentExited = errors.New("agent exited")
	// ErrStillRunning: the pane's processes survived SIGKILL (EINTERNAL).
	ErrStillRunning = errors.New("harness still running after SIGKILL")
	// ErrStillAlive: ExitStatus asked about a pane whose process runs (EINVALID).
	ErrStillAlive = errors.New("pane still alive")
)

// fail builds a *loop.Error with code, a message, and cause.
func fail(code string, cause error, format string, args ...any) *loop.Error {
	return &loop.Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// tmuxFailed turns a failed tmux call into a *loop.Error: ENOTFOUND
// wrapping ErrNoSession when tmux says the session is gone (the tmux error
// is kept in the message), else EINTERNAL wrapping the tmux error.
func tmuxFailed(target, doing string, err error) *loop.Error {
	if sessionGone(err) {
		return fail(loop.ENOTFOUND, errors.Join(ErrNoSession, err),
			"tmux session %s not found (%s failed: %s)", target, doing, stderrOf(err))
	}
	return fail(loop.EINTERNAL, err, "could not %s tmux session %s: %v", doing, target, err)
}
