package harness

import (
	"context"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// The loop.Harness methods by which the service learns a conversation id
// and delivers a message, for each adapter.

// CapturesSessionID reports false: --session-id takes the id the-loop chose.
func (*Claude) CapturesSessionID() bool { return false }

// CapturesSessionID reports false: --session-id takes the id the-loop chose.
func (*Gemini) CapturesSessionID() bool { return false }

// CapturesSessionID reports true: Codex chooses the conversation id itself,
// read back from the pane with SessionIDOf.
func (*Codex) CapturesSessionID() bool { return true }

// CapturesSessionID reports false: a cursor pane is never hosted.
func (Cursor) CapturesSessionID() bool { return false }

// CaptureSessionID is WaitSessionID of the Codex in the pane process
// panePID: the id Codex chose, once its session file is open.
func (c *Codex) CaptureSessionID(ctx context.Context, panePID int, interval time.Duration) (string, error) {
	return WaitSessionID(ctx, c, panePID, interval)
}

// CaptureSessionID refuses: Claude Code runs under the id the-loop chose.
func (*Claude) CaptureSessionID(context.Context, int, time.Duration) (string, error) {
	return "", noCapture("claude")
}

// CaptureSessionID refuses: the Gemini CLI runs under the id the-loop chose.
func (*Gemini) CaptureSessionID(context.Context, int, time.Duration) (string, error) {
	return "", noCapture("gemini")
}

// CaptureSessionID refuses: a cursor pane is never hosted.
func (Cursor) CaptureSessionID(context.Context, int, time.Duration) (string, error) {
	return "", noCapture("cursor")
}

// noCapture is the refusal of CaptureSessionID by an adapter whose CLI
// does not choose its own id.
func noCapture(name string) error {
	return loop.Internal("the %s harness runs under the conversation id the-loop chose; there is none to capture", name)
}

// JoinsRunningTurn reports false: Claude Code queues a message submitted
// during a turn for a turn of its own.
func (*Claude) JoinsRunningTurn() bool { return false }

// JoinsRunningTurn reports false: the Gemini CLI takes a message in a turn
// of its own.
func (*Gemini) JoinsRunningTurn() bool { return false }

// JoinsRunningTurn reports false: a cursor pane is never hosted.
func (Cursor) JoinsRunningTurn() bool { return false }

// SubmitDelay is 0: the runner's own delay serves Claude Code.
func (*Claude) SubmitDelay() time.Duration { return 0 }

// SubmitDelay is 0: the runner's own delay serves Codex.
func (*Codex) SubmitDelay() time.Duration { return 0 }

// SubmitDelay is 0: a cursor pane is never hosted.
func (Cursor) SubmitDelay() time.Duration { return 0 }

// SeedTrust adds nothing: cursor-agent has no trust surface to pre-seed.
func (Cursor) SeedTrust(string, []string) ([]string, error) { return nil, nil }

// UnseedTrust removes nothing: cursor-agent has no trust surface.
func (Cursor) UnseedTrust([]string) error { return nil }
