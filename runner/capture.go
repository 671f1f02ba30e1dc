package runner

import (
	"context"
	"slices"
	"strconv"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// MaxCaptureLines bounds what Capture returns of a pane.
const MaxCaptureLines = 2000

// Capture returns the last lines (at most n, 1 ≤ n ≤ MaxCaptureLines) of
// target's agent pane, oldest first, as tmux renders them without
// attributes: the visible screen and, above it, as much of the pane's
// history as n reaches (`capture-pane -p -S -<n>`). Blank lines below the
// last line with text (the empty screen under a prompt) are left out. A
// dead pane (remain-on-exit) is captured like a live one. A missing session
// is ENOTFOUND.
func (t *Tmux) Capture(ctx context.Context, target string, n int) ([]string, error) {
	if err := guard(target); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxCaptureLines {
		return nil, fail(loop.EINVALID, nil, "cannot capture %d lines of %s: ask for 1 to %d", n, target, MaxCaptureLines)
	}
	out, err := t.probe(ctx, "capture-pane", "-p", "-S", "-"+strconv.Itoa(n), "-t", agentPane(target))
	if err != nil {
		return nil, tmuxFailed(target, "capture", err)
	}
	return lastLines(out, n), nil
}

// lastLines splits a capture into lines, drops the trailing blank ones
// and keeps the last n.
func lastLines(out string, n int) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return slices.Clip(lines)
}

// Capture passes through: it changes nothing and needs no liveness.
func (c *cachedRunner) Capture(ctx context.Context, target string, n int) ([]string, error) {
	return c.inner.Capture(ctx, target, n)
}
