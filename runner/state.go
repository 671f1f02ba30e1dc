package runner

import (
	"context"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// State probes one target (original §2.2, "silence is not absence"):
// has-session answering non-zero ⇒ absent; tmux not answering ⇒ unknown;
// every pane dead ⇒ dead; anything else ⇒ live. A target that is not a
// the-loop session name is never asked about and reads unknown.
func (t *Tmux) State(ctx context.Context, target string) loop.PaneState {
	if err := guard(target); err != nil {
		t.log.Warn("refusing to probe tmux target", "target", target, "error", err)
		return loop.PaneUnknown
	}
	if _, err := t.probe(ctx, "has-session", "-t", sessionTarget(target)); err != nil {
		if answered(err) {
			return loop.PaneAbsent
		}
		return loop.PaneUnknown
	}
	out, err := t.probe(ctx, "list-panes", "-s", "-t", sessionTarget(target), "-F", "#{pane_dead}")
	if err != nil {
		return loop.PaneLive
	}
	return paneStateOf(strings.Fields(out))
}

// paneStateOf reads pane_dead flags: all "1" ⇒ dead, else live.
func paneStateOf(flags []string) loop.PaneState {
	if len(flags) == 0 {
		return loop.PaneLive
	}
	for _, f := range flags {
		if f != "1" {
			return loop.PaneLive
		}
	}
	return loop.PaneDead
}

// States probes many targets with one tmux call (list-panes -a). No server
// ⇒ all absent; no answer (or an unexpected failure) ⇒ all unknown.
// Targets that are not the-loop session names read unknown.
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
	out, err := t.probe(ctx, "list-panes", "-a", "-F", "#{session_name}\t#{pane_dead}")
	if err != nil {
		if answered(err) && noServer(stderrOf(err)) {
			return set(loop.PaneAbsent)
		}
		return set(loop.PaneUnknown)
	}
	flags := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		name, dead, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		flags[name] = append(flags[name], strings.TrimSpace(dead))
	}
	for _, tg := range targets {
		if _, done := res[tg]; done {
			continue
		}
		if f, ok := flags[tg]; ok {
			res[tg] = paneStateOf(f)
		} else {
			res[tg] = loop.PaneAbsent
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
