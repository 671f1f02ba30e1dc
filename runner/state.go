package runner

import (
	"context"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// State probes one target (original §2.2, "silence is not absence"):
// has-session answering that the session or the server does not exist ⇒
// absent (absentAnswer); tmux not answering, or answering anything else
// (permission denied, a version mismatch) ⇒ unknown; the agent's pane
// (agentPane) dead ⇒ dead; anything else ⇒ live, including a failed pane
// probe. A pane an operator opened in the session does not count. A target
// that is not a the-loop session name is never asked about and reads
// unknown.
func (t *Tmux) State(ctx context.Context, target string) loop.PaneState {
	if err := guard(target); err != nil {
		t.log.Warn("refusing to probe tmux target", "target", target, "error", err)
		return loop.PaneUnknown
	}
	if st := t.presence(ctx, target); st != loop.PaneLive {
		return st
	}
	if dead, err := t.agentDead(ctx, target); err == nil && dead {
		return loop.PaneDead
	}
	return loop.PaneLive
}

// presence runs has-session: PaneLive when the session exists (its pane
// not yet looked at), PaneAbsent when tmux says it or the server does not
// exist, PaneUnknown otherwise.
func (t *Tmux) presence(ctx context.Context, target string) loop.PaneState {
	_, err := t.probe(ctx, "has-session", "-t", sessionTarget(target))
	switch {
	case err == nil:
		return loop.PaneLive
	case absentAnswer(err):
		return loop.PaneAbsent
	}
	if answered(err) {
		t.log.Warn("tmux gave an unexpected answer about a session", "target", target, "error", err)
	}
	return loop.PaneUnknown
}

// agentDead reads #{pane_dead} of target's agent pane.
func (t *Tmux) agentDead(ctx context.Context, target string) (bool, error) {
	f, err := t.display(ctx, target, "#{pane_dead}")
	if err != nil {
		return false, err
	}
	return f[0] == "1", nil
}

// statesFormat is what States asks list-panes -a for each pane.
// agentPanes reads list-panes -a lines of statesFormat (and n-5 more
// fields): for each session seen, the fields of its agent pane — the
// top-left pane of its lowest-numbered window (see States) —, nil when no
// pane of it is top-left. Lines of another width are skipped.
func agentPanes(out string, n int) map[string][]string {
	window := map[string]int{}
	agents := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if len(f) != n {
			continue
		}
		if _, seen := agents[f[0]]; !seen {
			agents[f[0]] = nil
		}
		w, err := strconv.Atoi(f[1])
		if best, ok := window[f[0]]; err != nil || f[2] != "1" || f[3] != "1" || (ok && w >= best) {
			continue
		}
		window[f[0]], agents[f[0]] = w, f
	}
	return agents
}

const statesFormat = "#{session_name}\t#{window_index}\t#{pane_at_top}\t#{pane_at_left}\t#{pane_dead}"

// States probes many targets with one tmux call (list-panes -a): each
// session's state is that of its agent pane, the top-left pane of its
// lowest-indexed window (as agentPane). No server ⇒ all absent (noServer);
// no answer, or any other failure ⇒ all unknown. A session listed without a
// top-left pane reads live. Targets that are not the-loop session names
// read unknown.
func (t *Tmux) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	res := make(map[string]loop.PaneState, len(targets))
	valid := 0
	for _, tg := range targets {
		if guard(tg) != nil {
			res[tg] = loop.PaneUnknown
			continue
		}
		valid++
	}
	if valid == 0 {
		return res
	}
	set := func(st loop.PaneState) map[string]loop.PaneState {
		for _, tg := range targets {
			if _, done := res[tg]; !done {
				res[tg] = st
			}
		}
		return res
	}
	out, err := t.probe(ctx, "list-panes", "-a", "-F", statesFormat)
	if err != nil {
		if answered(err) && noServer(stderrOf(err)) {
			return set(loop.PaneAbsent)
		}
		if answered(err) {
			t.log.Warn("tmux gave an unexpected answer listing panes", "error", err)
		}
		return set(loop.PaneUnknown)
	}
	agents := agentPanes(out, 5)
	for _, tg := range targets {
		if _, done := res[tg]; done {
			continue
		}
		switch f, seen := agents[tg]; {
		case !seen:
			res[tg] = loop.PaneAbsent
		case f != nil && f[4] == "1":
			res[tg] = loop.PaneDead
		default:
			res[tg] = loop.PaneLive
		}
	}
	return res
}

// statusWait bounds how long ExitStatus waits for tmux to record the exit
// status of a pane it already reports dead.
const statusWait = 2 * time.Second

// ExitStatus returns the exit status of the target's dead pane
// (#{pane_dead_status}); a process killed by a signal reads 128+signal.
// A pane whose process still runs is an EINVALID error wrapping
// ErrStillAlive; a missing session is ENOTFOUND wrapping ErrNoSession.
//
// tmux marks a pane dead when its tty closes, and records the status when
// it reaps the process; seen on tmux 3.3a: an exited harness can stay an
// unreaped zombie (status empty) until the server's next SIGCHLD. So when
// the status is missing, ExitStatus runs `run-shell true` once (a child of
// the server whose exit makes it reap) and asks again.
func (t *Tmux) ExitStatus(ctx context.Context, target string) (int, error) {
	if err := guard(target); err != nil {
		return 0, err
	}
	for waited := time.Duration(0); ; waited += statusPoll {
		f, err := t.display(ctx, target, "#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}")
		if err != nil {
			return 0, err
		}
		if f[0] != "1" {
			return 0, fail(loop.EINVALID, ErrStillAlive, "the harness in tmux session %s is still running", target)
		}
		if n, err := strconv.Atoi(f[1]); err == nil {
			return n, nil
		}
		if n, err := strconv.Atoi(f[2]); err == nil {
			return 128 + n, nil
		}
		if waited == 0 {
			if err := t.do(ctx, "run-shell", "true"); err != nil {
				t.log.Debug("could not nudge tmux to reap", "target", target, "error", err)
			}
			continue
		}
		if waited >= statusWait || t.opt.Sleep(ctx, statusPoll) != nil {
			return 0, fail(loop.EINTERNAL, nil, "tmux did not report how the harness in %s exited", target)
		}
	}
}

// statusPoll is how often ExitStatus asks again.
const statusPoll = 20 * time.Millisecond
