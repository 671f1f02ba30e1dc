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

// Snapshot reads what a readiness check looks at (decisions D14), in the
// agent's pane (agentPane), with one tmux call — a command list of
// display-message and capture-pane, so a say pays one round trip for its
// look at the pane: the pane's screen, whether its process has exited,
// the session's tag (TagOption), and whether its tty is in canonical mode
// (termios ICANON, read from the pane's tty device). display-message names
// the session first: it answers an unknown target with empty fields
// (tmux 3.3a), capture-pane then with "can't find session".
func (t *Tmux) Snapshot(ctx context.Context, target string) (loop.PaneSnapshot, error) {
	if err := guard(target); err != nil {
		return loop.PaneSnapshot{}, err
	}
	pane := agentPane(target)
	out, err := t.probe(ctx, "display-message", "-p", "-t", pane, "#{session_name}\t#{pane_tty}\t#{pane_dead}\t#{"+TagOption+"}",
		";", "capture-pane", "-p", "-t", pane)
	if err != nil {
		return loop.PaneSnapshot{}, tmuxFailed(target, "capture", err)
	}
	head, screen, _ := strings.Cut(out, "\n")
	f := strings.Split(head, "\t")
	if f[0] != target || len(f) != 4 {
		return loop.PaneSnapshot{}, fail(loop.ENOTFOUND, ErrNoSession, "tmux session %s not found", target)
	}
	tty := f[1]
	snap := loop.PaneSnapshot{Screen: screen, Dead: f[2] == "1", Canonical: true, Tag: f[3]}
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
