package harness

import loop "github.com/the-loop-dev/the-loop"

// Cursor is the cursor-agent adapter. cursor-agent has no pre-assignable
// conversation id and no resume in interactive mode, so it refuses to be
// hosted in tmux, as in the original (original §3.2): both argv builders return an
// EINVALID *loop.Error with the original's message.
type Cursor struct{}

var _ loop.Harness = Cursor{}

// Name returns "cursor".
func (Cursor) Name() string { return "cursor" }

// Binary returns "cursor-agent".
func (Cursor) Binary() string { return "cursor-agent" }

// FreshArgv always refuses: cursor-agent cannot take a conversation id
// chosen in advance in interactive mode.
func (Cursor) FreshArgv(string, []string, string) ([]string, error) {
	return nil, loop.Invalid("the cursor harness does not support the tmux runner (no pre-assignable session id in interactive mode)")
}

// ResumeArgv always refuses: cursor-agent cannot resume in interactive mode.
func (Cursor) ResumeArgv(string, []string, string) ([]string, error) {
	return nil, loop.Invalid("the cursor harness cannot resume a conversation in interactive mode")
}

// Prepare is a no-op: cursor-agent has no trust surface to pre-seed.
func (Cursor) Prepare(string, []string) error { return nil }

// Ready is always false: a cursor pane is never hosted.
func (Cursor) Ready(loop.PaneSnapshot) bool { return false }
