package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// StatusCmd is `the-loop status`: the service and every declared or recorded
// standing session; exit 1 when something that should be up is not. Made
// for cron: no TTY needed, no colour.
type StatusCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run reports.
func (c *StatusCmd) Run(a *App, cfg *config.Config) error {
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
	now := time.Now()
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
		if notes := sessionNotes(r, now); notes != "" {
			line += "  " + termSafe(notes)
		}
		if r.Status == loop.StatusFailed {
			line += " — `the-loop standing start " + termSafe(r.Name) + "` starts it again"
		}
		fmt.Fprintln(w, line)
	}
}

// sessionNotes is what status says of a session after its status word:
// "up 2h5m", its restarts and last exit while it runs; why it is down
// (StandingRow.DownReason) when it is not.
func sessionNotes(r loop.StandingRow, now time.Time) string {
	var notes []string
	if r.Running {
		if up := uptime(r, now); up != "" {
			notes = append(notes, "up "+up)
		}
	} else if r.DownReason != "" {
		notes = append(notes, "down: "+r.DownReason)
	}
	switch {
	case r.Restarts == 1:
		notes = append(notes, "1 restart")
	case r.Restarts > 1:
		notes = append(notes, fmt.Sprintf("%d restarts", r.Restarts))
	}
	if r.Running && r.LastExit != nil {
		notes = append(notes, "last exit: "+lastExit(r.LastExit, now))
	}
	return strings.Join(notes, " · ")
}

// uptime is how long a running session's agent has run, from its
// recorded start ("" when the record has none).
func uptime(r loop.StandingRow, now time.Time) string {
	started, err := time.Parse(loop.RecordTimeFormat, r.StartedAt)
	if err != nil || !r.Running {
		return ""
	}
	return span(now.Sub(started))
}

// lastExit words an exit for a table cell: "status 1, 5m ago", "SIGKILL,
// 2h ago".
func lastExit(e *loop.ExitInfo, now time.Time) string {
	if e == nil {
		return "-"
	}
	what := "no status"
	switch {
	case e.Signal != "":
		what = e.Signal
	case e.Code != nil:
		what = fmt.Sprintf("status %d", *e.Code)
	}
	if at, err := time.Parse(loop.RecordTimeFormat, e.At); err == nil {
		what += ", " + span(now.Sub(at)) + " ago"
	}
	return what
}

// span is a duration in its two largest units, as uptimes are read: 45s,
// 5m3s, 2h13m, 3d4h.
func span(d time.Duration) string {
	d = max(0, d.Round(time.Second))
	days, hours := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	mins, secs := int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	case mins > 0:
		return fmt.Sprintf("%dm%ds", mins, secs)
	}
	return fmt.Sprintf("%ds", secs)
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
		return string(loop.StatusAbsent)
	}
	return string(r.Status)
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
