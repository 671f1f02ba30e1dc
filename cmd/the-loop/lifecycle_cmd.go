package main

import (
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// StartCmd is `the-loop start`: the service (detached, when enabled), then
// the standing sessions that auto-start, started by the service.
type StartCmd struct{}

// StopCmd is `the-loop stop`: every recorded standing session first, then
// the service. It works with the service down, not answering, or a config
// that no longer validates.
type StopCmd struct{}

// StatusCmd is `the-loop status`: the service and every declared or recorded
// standing session; exit 1 when something that should be up is not. Made
// for cron: no TTY needed, no colour.
type StatusCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// RestartCmd is `the-loop restart`: stop, then start; conversations resume.
type RestartCmd struct{}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Run starts.
func (c *StartCmd) Run(a *App) error {
	cfg, err := a.LoadConfig()
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if err := refuseUnsafeService(cfg); err != nil {
		return err
	}
	rep, note := a.startAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, rep, note)
	return okExit(rep.OK)
}

// Run stops.
func (c *StopCmd) Run(a *App) error {
	ctx, stop := signalContext()
	defer stop()
	rep := a.stopAll(ctx, a.LoadForStop())
	renderLifecycle(a.Stdout, a.Stderr, rep, "")
	return okExit(rep.OK)
}

// Run restarts.
func (c *RestartCmd) Run(a *App) error {
	cfg, err := a.LoadConfig()
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if err := refuseUnsafeService(cfg); err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, "stopping:")
	down := a.stopAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, down, "")
	fmt.Fprintln(a.Stdout, "starting:")
	up, note := a.startAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, up, note)
	return okExit(down.OK && up.OK)
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

func okExit(ok bool) error {
	if ok {
		return nil
	}
	return &exitError{code: 1}
}

// refuseUnsafeService refuses, before anything is spawned, a service that
// `the-loop serve` would refuse to run (decisions D24: a host beyond loopback
// without service.exposed, an empty service.tokenEnv variable; issue 14: a
// state root, token file or CLI config others may write), creating the
// operator's token file when there is none yet.
func refuseUnsafeService(cfg *config.Config) error {
	if !cfg.Service.Enabled {
		return nil
	}
	_, err := serveToken(cfg)
	return err
}

// startAll brings the service up (when enabled), then the standing sessions
// that auto-start — through the service when it runs. A service of another
// state root answering at the address is refused, never used.
func (a *App) startAll(ctx context.Context, cfg *config.Config) (loop.Report, string) {
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled}
	held := 0 // a service of this state root holds the store but is not the one answering
	if !cfg.Service.Enabled {
		row.Outcome = "disabled"
	} else {
		switch st := a.probe(cfg, 2*time.Second); {
		case st.ours:
			row.Outcome, row.PID, row.Detail = "already-running", st.health.PID, fmt.Sprintf("pid %d, %s", st.health.PID, serviceURL(cfg))
		case st.answered:
			row.Outcome, row.Detail, held = "failed", st.foreign(cfg), st.holder
		case st.holder != 0:
			row.Outcome, row.Detail, held = "failed", fmt.Sprintf("a service (pid %d) holds %s but does not answer %s; run `the-loop stop`", st.holder, pidPath(cfg), serviceURL(cfg)), st.holder
		default:
			if pid, err := a.spawnService(cfg); err != nil {
				row.Outcome, row.Detail = "failed", err.Error()
			} else {
				row.Outcome, row.PID, row.Detail = "started", pid, fmt.Sprintf("pid %d, %s", pid, serviceURL(cfg))
			}
		}
	}
	rep := loop.Report{Services: []loop.ServiceRow{row}, StandingSessions: []loop.StandingRow{}}
	serviceOK := row.Outcome == "started" || row.Outcome == "already-running" || row.Outcome == "disabled"
	rows, ok, note := a.startStanding(ctx, cfg, row.Outcome == "started" || row.Outcome == "already-running", held)
	rep.StandingSessions = rows
	rep.OK = serviceOK && ok
	return rep, note
}

// startStanding starts the auto-starting sessions through the service
// (viaService), or in this process — unless held names the pid of a
// service that holds the store without being the one that answers.
func (a *App) startStanding(ctx context.Context, cfg *config.Config, viaService bool, held int) ([]loop.StandingRow, bool, string) {
	if cfg.StandingErr != nil {
		return []loop.StandingRow{lifecycle.Misconfigured(cfg.StandingErr)}, false, ""
	}
	if cfg.Standing == nil || !cfg.Standing.Enabled {
		return []loop.StandingRow{}, true, "standing sessions: disabled (standingSessions.enabled is false)"
	}
	var res loop.StandingControlResult
	var err error
	switch {
	case viaService:
		res, err = a.client(cfg).ControlStanding(ctx, "", "start", true)
		if err != nil {
			return []loop.StandingRow{failedRow(restFailure(cfg, err))}, false, ""
		}
	case held != 0:
		return []loop.StandingRow{failedRow(fmt.Sprintf("not started: the service (pid %d) holds the store; see the service row", held))}, false, ""
	default:
		err = a.inProcess(cfg, func(svc *lifecycle.Service) error {
			res, err = svc.ControlStanding(ctx, cfg, "", "start", true)
			return err
		})
		if err != nil {
			return []loop.StandingRow{failedRow(loop.ErrorMessage(err))}, false, ""
		}
	}
	return res.Sessions, res.OK, ""
}

// failedRow is the one row standing sessions get when they could not be
// reached at all.
func failedRow(detail string) loop.StandingRow {
	return loop.StandingRow{Name: "standingSessions", Outcome: loop.OutcomeFailed, Detail: detail}
}

// restFailure words a REST call the service refused or failed: a 401
// names the variable to export (service.tokenEnv).
func restFailure(cfg *config.Config, err error) string {
	msg := loop.ErrorMessage(err)
	if loophttp.HTTPStatus(err) == nethttp.StatusUnauthorized {
		env := cfg.Service.TokenEnv
		if env == "" {
			env = "the variable service.tokenEnv names"
		}
		return fmt.Sprintf("the service refused this CLI (401): export %s (service.tokenEnv) with the service's token — %s", env, msg)
	}
	return msg
}

// inProcess runs fn with the verbs wired in this process (the store opened
// around each transaction).
func (a *App) inProcess(cfg *config.Config, fn func(svc *lifecycle.Service) error) error {
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(a.Lifecycle(fixed(cfg), db, "cli", false))
}

// stopAll stops every recorded standing session, then the service. When
// this state root's service answers, it stops them; when it does not
// answer, or answers but refuses the stop (a CLI without the token), it is
// ended first and they are stopped in this process. A service of another
// state root answering at the address is left alone.
func (a *App) stopAll(ctx context.Context, cfg *config.Config) loop.Report {
	rep := loop.Report{StandingSessions: []loop.StandingRow{}}
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled}
	var res loop.StandingControlResult
	var err error
	st := a.probe(cfg, 2*time.Second)
	local := !st.ours
	if st.ours {
		if res, err = a.client(cfg).ControlStanding(ctx, "", "stop", false); err != nil && ctx.Err() == nil {
			row.Detail = fmt.Sprintf("pid %d refused the stop (%s)", st.health.PID, restFailure(cfg, err))
			local = true
		}
	}
	ended := false
	if local {
		if pid := servicePID(cfg); pid != 0 {
			why := row.Detail
			if why == "" {
				why = fmt.Sprintf("pid %d did not answer", pid)
			}
			if _, kerr := endService(cfg, 3*time.Second); kerr != nil {
				row.Detail = why + "; " + kerr.Error()
			} else {
				row.Detail, ended = why+"; ended it", true
			}
		}
		err = a.inProcess(cfg, func(svc *lifecycle.Service) error {
			res, err = svc.StopStanding(ctx, cfg, "")
			return err
		})
	}
	standingOK := err == nil && res.OK
	if err != nil {
		rep.StandingSessions = []loop.StandingRow{failedRow(loop.ErrorMessage(err))}
	} else if res.Sessions != nil {
		rep.StandingSessions = res.Sessions
	}
	pid := servicePID(cfg)
	switch stopped, kerr := endService(cfg, 30*time.Second); {
	case kerr != nil:
		row.Outcome, row.Detail = "failed", kerr.Error()
	case stopped:
		row.Outcome, row.Detail = "stopped", fmt.Sprintf("pid %d", pid)
	case ended:
		row.Outcome = "stopped"
	default:
		row.Outcome = "not-running"
		if st.answered && !st.ours {
			row.Detail = st.foreign(cfg) + "; left it running"
		}
	}
	rep.Services = []loop.ServiceRow{row}
	rep.OK = standingOK && (row.Outcome == "stopped" || row.Outcome == "not-running")
	return rep
}

// statusAll reports the service and the standing sessions (decisions D6).
// Once this state root's service answers, the store is never opened here:
// a REST failure is shown in the standing row instead.
func (a *App) statusAll(ctx context.Context, cfg *config.Config) loop.Report {
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled, URL: serviceURL(cfg),
		MCP: &loop.MCPSummary{Enabled: cfg.Service.MCPEnabled, Path: "/mcp"}}
	st := a.probe(cfg, 2*time.Second)
	switch {
	case st.ours:
		row.Running, row.Healthy, row.PID = true, true, st.health.PID
		rep, err := a.client(cfg).Status(ctx)
		if err != nil {
			return loop.Report{Services: []loop.ServiceRow{row}, StandingSessions: []loop.StandingRow{failedRow(restFailure(cfg, err))}}
		}
		rep.Services = []loop.ServiceRow{row}
		rep.OK = rep.OK && row.Running
		return rep
	case st.answered:
		row.Detail = st.foreign(cfg)
	}
	if st.holder != 0 {
		// It holds the store but does not answer here: opening the store
		// would only wait for its lock.
		row.Running, row.PID = true, st.holder
		detail := fmt.Sprintf("the service (pid %d) holds the store but does not answer %s; run `the-loop stop`", st.holder, serviceURL(cfg))
		return loop.Report{Services: []loop.ServiceRow{row}, StandingSessions: []loop.StandingRow{failedRow(detail)}}
	}
	rep := loop.Report{Services: []loop.ServiceRow{row}}
	var ok bool
	err := a.inProcess(cfg, func(svc *lifecycle.Service) error {
		rep.StandingSessions, ok = svc.StandingStatus(ctx, cfg)
		return nil
	})
	if err != nil {
		rep.StandingSessions, ok = []loop.StandingRow{failedRow(loop.ErrorMessage(err))}, false
	}
	rep.OK = ok && (!row.Enabled || row.Healthy)
	return rep
}

// renderLifecycle writes start's and stop's report (original §7.5): the
// service row and the header on stdout, each session row on stdout or, when
// it failed, stderr (original §8.1) — and then, so that a log of stdout
// alone still shows it, a summary line on stdout when any row failed.
func renderLifecycle(stdout, stderr io.Writer, rep loop.Report, note string) {
	width := 0
	for _, s := range rep.Services {
		width = max(width, len(s.Service))
	}
	for _, s := range rep.Services {
		state := "enabled"
		if !s.Enabled {
			state = "disabled"
		}
		line := fmt.Sprintf("%-*s  %-15s [%s]", width, s.Service, s.Outcome, state)
		if s.Detail != "" {
			line += "  " + termSafe(s.Detail)
		}
		fmt.Fprintln(stdout, line)
	}
	if note != "" {
		fmt.Fprintln(stdout, termLines(note))
	}
	if len(rep.StandingSessions) > 0 {
		fmt.Fprintln(stdout, "standing sessions:")
		renderControl(stdout, stderr, rep.StandingSessions)
		if n := countFailed(rep.StandingSessions); n > 0 {
			fmt.Fprintf(stdout, "standing sessions: %d failed (see stderr)\n", n)
		}
	}
}

// countFailed counts the failed rows (the ones renderControl writes to
// stderr).
func countFailed(rows []loop.StandingRow) int {
	n := 0
	for _, r := range rows {
		if r.Outcome == loop.OutcomeFailed {
			n++
		}
	}
	return n
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
			if !s.Healthy {
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
	for _, r := range rep.StandingSessions {
		if r.Outcome == loop.OutcomeMisconfigured || r.Outcome == loop.OutcomeFailed {
			fmt.Fprintf(w, "%-11s %s  %s\n", termSafe(r.Name), r.Outcome, termSafe(r.Detail))
			continue
		}
		running := "not running"
		if r.Running {
			running = "running"
		}
		if r.Status == loop.StatusFailed { // the supervisor gave up on it
			running = "failed after repeated restarts (`the-loop standing start " + r.Name + "` starts it again)"
		}
		fmt.Fprintf(w, "%-11s %s [%s]\n", termSafe(r.Name), running, where(r))
	}
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
