package runner

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// readyPoll is how often WaitReady looks at the pane.
const readyPoll = 50 * time.Millisecond

// Snapshot reads what a readiness check looks at (decisions D14), in the agent's
// pane (agentPane): the pane's screen
// (capture-pane), whether its process has exited, and whether its tty is in
// canonical mode (termios ICANON, read from the pane's tty device).
func (t *Tmux) Snapshot(ctx context.Context, target string) (loop.PaneSnapshot, error) {
	if err := guard(target); err != nil {
		return loop.PaneSnapshot{}, err
	}
	f, err := t.display(ctx, target, "#{pane_tty}", "#{pane_dead}")
	if err != nil {
		return loop.PaneSnapshot{}, err
	}
	tty := f[0]
	snap := loop.PaneSnapshot{Dead: f[1] == "1", Canonical: true}
	screen, err := t.probe(ctx, "capture-pane", "-p", "-t", agentPane(target))
	if err != nil {
		return loop.PaneSnapshot{}, tmuxFailed(target, "capture", err)
	}
	snap.Screen = screen
	if snap.Dead {
		return snap, nil
	}
	if tty == "" {
		return snap, fail(loop.EINTERNAL, nil, "tmux did not name the tty of tmux session %s", target)
	}
	canon, err := ttyCanonical(tty)
	if err != nil {
		return snap, fail(loop.EINTERNAL, err, "could not read the terminal mode of %s (%s): %v", target, tty, err)
	}
	snap.Canonical = canon
	return snap, nil
}

// display reads formats of target's agent pane with display-message, which
// names the session first: display-message answers an unknown target with
// empty fields and exit status 0 (tmux 3.3a), so a session name that is not
// target's means the session does not exist.
func (t *Tmux) display(ctx context.Context, target string, formats ...string) ([]string, error) {
	format := "#{session_name}\t" + strings.Join(formats, "\t")
	out, err := t.probe(ctx, "display-message", "-p", "-t", agentPane(target), format)
	if err != nil {
		return nil, tmuxFailed(target, "inspect", err)
	}
	f := strings.Split(strings.TrimRight(out, "\n"), "\t")
	if f[0] != target {
		return nil, fail(loop.ENOTFOUND, ErrNoSession, "tmux session %s not found", target)
	}
	for len(f) < len(formats)+1 {
		f = append(f, "")
	}
	return f[1:], nil
}

// WaitReady polls target's pane (every 50ms) until ready accepts it, and
// fails after timeout with an error wrapping ErrNotReady ("… is not ready
// for input after Ns (its prompt is not up); nothing was delivered"). A
// pane whose process has exited fails at once (ErrAgentExited), and so
// does a missing session (ENOTFOUND).
func (t *Tmux) WaitReady(ctx context.Context, target string, ready func(loop.PaneSnapshot) bool, timeout time.Duration) error {
	if err := guard(target); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		snap, err := t.Snapshot(ctx, target)
		switch {
		case err != nil && errors.Is(err, ErrNoSession):
			return err
		case err != nil:
			lastErr = err
		case snap.Dead:
			return fail(loop.EINTERNAL, ErrAgentExited,
				"the agent in %s has exited; nothing was delivered", target)
		case ready(snap):
			return nil
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
		if err := t.opt.Sleep(ctx, min(readyPoll, time.Until(deadline))); err != nil {
			break
		}
	}
	cause := ErrNotReady
	if lastErr != nil {
		cause = errors.Join(ErrNotReady, lastErr)
	}
	return fail(loop.EINTERNAL, cause,
		"the agent in %s is not ready for input after %ss (its prompt is not up); nothing was delivered",
		target, strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
}
