package testkit

import (
	"context"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// FakeHarness builds claude-like argv and is always ready.
type FakeHarness struct{}

var _ loop.Harness = FakeHarness{}

// Name is "claude".
func (FakeHarness) Name() string { return "claude" }

// Binary is "claude".
func (FakeHarness) Binary() string { return "claude" }

// FreshArgv is --session-id id, the args, the prompt.
func (FakeHarness) FreshArgv(id string, args []string, prompt string) ([]string, error) {
	return append(append([]string{"--session-id", id}, args...), prompt), nil
}

// ResumeArgv is --resume id, the args, the prompt.
func (FakeHarness) ResumeArgv(id string, args []string, prompt string) ([]string, error) {
	return append(append([]string{"--resume", id}, args...), prompt), nil
}

// CheckSessionID refuses what a claude adapter refuses: an id that is not
// a lowercase UUID.
func (FakeHarness) CheckSessionID(id string) error {
	if len(id) == 36 && strings.Trim(id, "0123456789abcdef-") == "" && id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' &&
		strings.Count(id, "-") == 4 {
		return nil
	}
	return loop.Invalid("%q is not a claude conversation id (a lowercase UUID)", id)
}

// Prepare does nothing.
func (FakeHarness) Prepare(string, []string) error { return nil }

// Ready is always true.
func (FakeHarness) Ready(loop.PaneSnapshot) bool { return true }

// WireHooks returns w.Args: the fake declares no hooks (a test that
// needs claude's wires the harness adapter's own).
func (FakeHarness) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	return w.Args, nil, nil
}

// CapturesSessionID is false: the fake runs under the id it is given.
func (FakeHarness) CapturesSessionID() bool { return false }

// CaptureSessionID refuses, as an adapter that takes the id it is given.
func (FakeHarness) CaptureSessionID(context.Context, int, time.Duration) (string, error) {
	return "", loop.Internal("the claude harness runs under the conversation id the-loop chose; there is none to capture")
}

// JoinsRunningTurn is false: a message during a turn is queued, as
// Claude Code queues it.
func (FakeHarness) JoinsRunningTurn() bool { return false }

// SubmitDelay is 0: the runner's own delay serves.
func (FakeHarness) SubmitDelay() time.Duration { return 0 }

// SeedTrust adds nothing.
func (FakeHarness) SeedTrust(string, []string) ([]string, error) { return nil, nil }

// UnseedTrust removes nothing.
func (FakeHarness) UnseedTrust([]string) error { return nil }

// ReadsTranscripts is false: the fake keeps no transcript.
func (FakeHarness) ReadsTranscripts() bool { return false }

// ReadTranscript refuses: the fake keeps no transcript.
func (FakeHarness) ReadTranscript(string, string, int) ([]loop.TranscriptEntry, error) {
	return nil, loop.Invalid("the fake harness keeps no transcript")
}

// TokenEntries gives none.
func (FakeHarness) TokenEntries(string, string, int) ([]loop.TranscriptEntry, error) { return nil, nil }

// TranscriptMark is the zero mark: no transcript to look in.
func (FakeHarness) TranscriptMark(string, string) loop.TranscriptMark { return loop.TranscriptMark{} }

// PromptAfter finds nothing.
func (FakeHarness) PromptAfter(m loop.TranscriptMark, _ string) (string, loop.TranscriptMark) {
	return "", m
}

// PromptSum is "".
func (FakeHarness) PromptSum(string, string, string) string { return "" }
