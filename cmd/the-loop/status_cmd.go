package main

import (
	"fmt"
	"io"

	loop "github.com/the-loop-dev/the-loop"
)

// StatusCmd is `the-loop status`: the service and every declared or recorded
// standing session; exit 1 when something that should be up is not. Made
// for cron: no TTY needed, no colour.
type StatusCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run reports.
func (c *StatusCmd) Run(a *App) error {
	cfg, err := a.LoadConfig()
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	rep := a.statusAll(ctx, cfg)
	if c.Format == "json" {
		if err := writeJSON(a.Stdout, rep); err != nil {
			return err
		}
	} else {
		renderStatus(a.Stdout, rep)
	}
	return okExit(rep.OK)
}

// renderStatus writes status's text report.
func renderStatus(w io.Writer, rep loop.Report) {
	for _, s := range rep.Services {
		state := "enabled"
		if !s.Enabled {
			state = "disabled"
		}
		running := "not running"
		if s.Running {
			running = fmt.Sprintf("running (pid %d)", s.PID)
		}
		fmt.Fprintf(w, "%-11s %s [%s]\n", s.Service, running, state)
		if s.Running {
			health := "healthy"
			switch {
			case s.Degraded != "":
				health = "degraded: " + termSafe(s.Degraded)
			case !s.Healthy:
				health = "not answering"
			}
			fmt.Fprintf(w, "%-11s %s (%s)\n", "", s.URL, health)
		}
		if s.Detail != "" {
			fmt.Fprintf(w, "%-11s %s\n", "", termSafe(s.Detail))
		}
	}
	if len(rep.StandingSessions) == 0 {
		return
	}
	fmt.Fprintln(w, "standing sessions:")
	width := 11 // "service" and its column, as the original lays them out
	for _, r := range rep.StandingSessions {
		width = max(width, len([]rune(termSafe(r.Name))))
	}
	for _, r := range rep.StandingSessions {
		if r.Outcome == loop.OutcomeMisconfigured || r.Outcome == loop.OutcomeFailed {
			fmt.Fprintf(w, "%-*s %s  %s\n", width, termSafe(r.Name), r.Outcome, termSafe(r.Detail))
			continue
		}
		word := statusWord(r)
		if r.Status == loop.StatusFailed { // the supervisor gave up on it
			word += " after repeated restarts"
		}
		line := fmt.Sprintf("%-*s %s [%s]", width, termSafe(r.Name), word, where(r))
		if r.Status == loop.StatusFailed {
			line += " — `the-loop standing start " + termSafe(r.Name) + "` starts it again"
		}
		fmt.Fprintln(w, line)
	}
}

// statusWord is a standing session's status in every text view (status,
// standing list): the row's status as JSON gives it (running, stopped,
// absent, failed, broken), except that a session recorded running whose
// pane is not live (or whose liveness tmux cannot tell) is "not running".
func statusWord(r loop.StandingRow) string {
	switch {
	case r.Status == loop.StatusRunning && !r.Running:
		return "not running"
	case r.Status == "":
		return loop.StatusAbsent
	}
	return r.Status
}

// where says where a status row comes from (decisions D20).
func where(r loop.StandingRow) string {
	switch {
	case r.Declared && r.AutoStart:
		return "declared"
	case r.Declared:
		return "declared, not auto-started"
	case r.Origin == loop.OriginCreated:
		return "created"
	default:
		return "recorded, no longer declared"
	}
}
