package runner

import (
	"context"
	"strconv"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// PanePIDs returns the pids of the live panes of tmux session target (the
// processes a hook's parent chain must reach to speak for the session).
func (t *Tmux) PanePIDs(ctx context.Context, target string) ([]int, error) {
	return t.livePanePids(ctx, target)
}

// PanePID returns the pid of the process tmux started in target's agent
// pane (one `display-message -p '#{pane_pid}'`): the root of the process
// tree a harness's id capture searches (harness.SessionIDReporter). A
// missing session is ENOTFOUND.
func (t *Tmux) PanePID(ctx context.Context, target string) (int, error) {
	if err := guard(target); err != nil {
		return 0, err
	}
	out, err := t.probe(ctx, "display-message", "-p", "-t", agentPane(target), "#{pane_pid}")
	if err != nil {
		return 0, tmuxFailed(target, "read the pane pid of", err)
	}
	if strings.TrimSpace(out) == "" { // tmux 3.x answers a missing target with nothing
		return 0, fail(loop.ENOTFOUND, ErrNoSession, "tmux session %s not found (no pane pid)", target)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return 0, fail(loop.EINTERNAL, err, "tmux gave no pane pid for tmux session %s (%q)", target, strings.TrimSpace(out))
	}
	return pid, nil
}

// AllPanePIDs returns the pids of the live panes of every session of this
// tmux server, by session name (one `list-panes -a`): how the service finds
// which session's pane a socket peer runs in. A server that is not running
// has no panes.
func (t *Tmux) AllPanePIDs(ctx context.Context) (map[string][]int, error) {
	// Concurrent callers share one list-panes begun after they called
	// (t.panes), bounded by the probe timeout rather than one caller's ctx.
	return t.panes.read(func() (map[string][]int, error) {
		return t.allPanePIDs(context.WithoutCancel(ctx))
	})
}

// allPanePIDs is one `list-panes -a` for AllPanePIDs.
func (t *Tmux) allPanePIDs(ctx context.Context) (map[string][]int, error) {
	out, err := t.probe(ctx, "list-panes", "-a", "-F", "#{pane_pid} #{pane_dead} #{session_name}")
	if err != nil {
		if absentAnswer(err) {
			return map[string][]int{}, nil
		}
		return nil, err
	}
	panes := map[string][]int{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || f[1] == "1" {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil && pid > 0 {
			panes[f[2]] = append(panes[f[2]], pid)
		}
	}
	return panes, nil
}
