package runner

import (
	"context"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	loop "github.com/the-loop-dev/the-loop"
)

// panesFormat is statesFormat with the dead pane's exit status and signal.
const panesFormat = statesFormat + "\t#{pane_dead_status}\t#{pane_dead_signal}"

// PaneStates is States with, for each dead agent pane, the exit status or
// signal tmux reports (#{pane_dead_status}, #{pane_dead_signal}), in one
// list-panes -a call. tmux can report a pane dead before it has reaped its
// process (ExitStatus): when a dead pane reports neither, PaneStates runs
// `run-shell true` once (the server reaps on the child's SIGCHLD) and asks
// again. Silence is not absence: a failed query reads every target unknown.
func (t *Tmux) PaneStates(ctx context.Context, targets []string) map[string]loop.PaneInfo {
	res, unreported := t.paneStates(ctx, targets)
	if unreported {
		if err := t.do(ctx, "run-shell", "true"); err == nil {
			again, _ := t.paneStates(ctx, targets)
			for tg, info := range again {
				if prev := res[tg]; prev.State == loop.PaneDead && info.State == loop.PaneDead {
					res[tg] = info
				}
			}
		}
	}
	return res
}

func (t *Tmux) paneStates(ctx context.Context, targets []string) (map[string]loop.PaneInfo, bool) {
	res := make(map[string]loop.PaneInfo, len(targets))
	var valid []string
	for _, tg := range targets {
		if guard(tg) != nil {
			res[tg] = loop.PaneInfo{State: loop.PaneUnknown}
			continue
		}
		valid = append(valid, tg)
	}
	if len(valid) == 0 {
		return res, false
	}
	out, err := t.probe(ctx, "list-panes", "-a", "-F", panesFormat)
	if err != nil {
		st := loop.PaneUnknown
		if answered(err) && noServer(stderrOf(err)) {
			st = loop.PaneAbsent
		} else if answered(err) {
			t.log.Warn("tmux gave an unexpected answer listing panes", "error", err)
		}
		for _, tg := range valid {
			res[tg] = loop.PaneInfo{State: st}
		}
		return res, false
	}
	agents := agentPanes(out, 7)
	unreported := false
	for _, tg := range valid {
		switch f, seen := agents[tg]; {
		case !seen:
			res[tg] = loop.PaneInfo{State: loop.PaneAbsent}
		case f != nil && f[4] == "1": // dead; f[5] its exit status, f[6] its signal
			info := loop.PaneInfo{State: loop.PaneDead}
			if n, err := strconv.Atoi(f[6]); err == nil && n > 0 {
				info.Signal = signalName(n)
			} else if n, err := strconv.Atoi(f[5]); err == nil {
				info.Code = &n
			} else {
				unreported = true
			}
			res[tg] = info
		default:
			res[tg] = loop.PaneInfo{State: loop.PaneLive}
		}
	}
	return res, unreported
}

// signalName is SIGKILL for 9; "signal N" for a number with no name.
func signalName(n int) string {
	if name := unix.SignalName(syscall.Signal(n)); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(n)
}
