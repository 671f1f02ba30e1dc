package main

import (
	"context"
	"fmt"
	"io"
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
	rep := a.stopAll(ctx, config.LoadTolerant(a.ConfigPath))
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
// without service.exposed, an empty service.tokenEnv variable).
func refuseUnsafeService(cfg *config.Config) error {
	if !cfg.Service.Enabled {
		return nil
	}
	_, err := loophttp.CheckServe(cfg.Service, os.Getenv)
	return err
}

// startAll brings the service up (when enabled), then the standing sessions
// that auto-start — through the service when it runs.
func (a *App) startAll(ctx context.Context, cfg *config.Config) (loop.Report, string) {
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled}
	switch {
	case !cfg.Service.Enabled:
		row.Outcome = "disabled"
	default:
		if h, ok := a.healthy(cfg, 2*time.Second); ok {
			row.Outcome, row.PID, row.Detail = "already-running", h.PID, fmt.Sprintf("pid %d, %s", h.PID, serviceURL(cfg))
		} else if pid := servicePID(cfg); pid != 0 {
			row.Outcome, row.Detail = "failed", fmt.Sprintf("a service (pid %d) holds %s but does not answer %s; run `the-loop stop`", pid, pidPath(cfg), serviceURL(cfg))
		} else if pid, err := a.spawnService(cfg); err != nil {
			row.Outcome, row.Detail = "failed", err.Error()
		} else {
			row.Outcome, row.PID, row.Detail = "started", pid, fmt.Sprintf("pid %d, %s", pid, serviceURL(cfg))
		}
	}
	rep := loop.Report{Services: []loop.ServiceRow{row}, StandingSessions: []loop.Row{}}
	serviceOK := row.Outcome == "started" || row.Outcome == "already-running" || row.Outcome == "disabled"
	rows, ok, note := a.startStanding(ctx, cfg, row.Outcome == "started" || row.Outcome == "already-running")
	rep.StandingSessions = rows
	rep.OK = serviceOK && ok
	return rep, note
}

func (a *App) startStanding(ctx context.Context, cfg *config.Config, viaService bool) ([]loop.Row, bool, string) {
	if cfg.StandingErr != nil {
		return []loop.Row{lifecycle.Misconfigured(cfg.StandingErr)}, false, ""
	}
	if cfg.Standing == nil || !cfg.Standing.Enabled {
		return []loop.Row{}, true, "standing sessions: disabled (standingSessions.enabled is false)"
	}
	var res loop.ControlResult
	var err error
	if viaService {
		res, err = a.client(cfg).Control(ctx, "", "start", true)
	} else {
		err = a.inProcess(cfg, func(svc *lifecycle.Service) error {
			res, err = svc.Control(ctx, cfg, "", "start", true)
			return err
		})
	}
	if err != nil {
		return []loop.Row{lifecycle.Misconfigured(err)}, false, ""
	}
	return res.Sessions, res.OK, ""
}

// inProcess runs fn with the verbs wired in this process (the store opened
// around each transaction).
func (a *App) inProcess(cfg *config.Config, fn func(svc *lifecycle.Service) error) error {
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(a.Lifecycle(cfg, db, "cli", false))
}

// stopAll stops every recorded standing session (through the service when
// it answers; a service that holds the store but does not answer is ended
// first), then the service.
func (a *App) stopAll(ctx context.Context, cfg *config.Config) loop.Report {
	rep := loop.Report{StandingSessions: []loop.Row{}}
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled}
	var res loop.ControlResult
	var err error
	if _, ok := a.healthy(cfg, 2*time.Second); ok {
		res, err = a.client(cfg).Control(ctx, "", "stop", false)
	} else {
		if pid := servicePID(cfg); pid != 0 {
			if _, kerr := endService(cfg, 3*time.Second); kerr != nil {
				row.Detail = kerr.Error()
			} else {
				row.Detail = fmt.Sprintf("pid %d did not answer; ended it", pid)
			}
		}
		err = a.inProcess(cfg, func(svc *lifecycle.Service) error {
			res, err = svc.Stop(ctx, cfg, "")
			return err
		})
	}
	standingOK := err == nil && res.OK
	if err != nil {
		rep.StandingSessions = []loop.Row{{Name: "standingSessions", Outcome: loop.OutcomeFailed, Detail: loop.ErrorMessage(err)}}
	} else if res.Sessions != nil {
		rep.StandingSessions = res.Sessions
	}
	pid := servicePID(cfg)
	switch ended, kerr := endService(cfg, 30*time.Second); {
	case kerr != nil:
		row.Outcome, row.Detail = "failed", kerr.Error()
	case ended:
		row.Outcome, row.Detail = "stopped", fmt.Sprintf("pid %d", pid)
	case row.Detail != "":
		row.Outcome = "stopped"
	default:
		row.Outcome = "not-running"
	}
	rep.Services = []loop.ServiceRow{row}
	rep.OK = standingOK && (row.Outcome == "stopped" || row.Outcome == "not-running")
	return rep
}

// statusAll reports the service and the standing sessions (decisions D6).
func (a *App) statusAll(ctx context.Context, cfg *config.Config) loop.Report {
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled, URL: serviceURL(cfg),
		MCP: &loop.MCPSummary{Enabled: cfg.Service.MCPEnabled, Path: "/mcp"}}
	if h, ok := a.healthy(cfg, 2*time.Second); ok {
		row.Running, row.Healthy, row.PID = true, true, h.PID
		if rep, err := a.client(cfg).Status(ctx); err == nil {
			rep.Services = []loop.ServiceRow{row}
			rep.OK = rep.OK && row.Running
			return rep
		}
	} else if pid := servicePID(cfg); pid != 0 {
		row.Running, row.PID = true, pid
	}
	rep := loop.Report{Services: []loop.ServiceRow{row}}
	var ok bool
	err := a.inProcess(cfg, func(svc *lifecycle.Service) error {
		rep.StandingSessions, ok = svc.StandingStatus(ctx, cfg)
		return nil
	})
	if err != nil {
		rep.StandingSessions, ok = []loop.Row{{Name: "standingSessions", Outcome: loop.OutcomeFailed, Detail: loop.ErrorMessage(err)}}, false
	}
	rep.OK = ok && (!row.Enabled || row.Healthy)
	return rep
}

// renderLifecycle writes start's and stop's report (original §7.5).
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
			line += "  " + s.Detail
		}
		fmt.Fprintln(stdout, line)
	}
	if note != "" {
		fmt.Fprintln(stdout, note)
	}
	if len(rep.StandingSessions) > 0 {
		fmt.Fprintln(stdout, "standing sessions:")
		renderControl(stdout, stderr, rep.StandingSessions)
	}
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
	}
	if len(rep.StandingSessions) == 0 {
		return
	}
	fmt.Fprintln(w, "standing sessions:")
	for _, r := range rep.StandingSessions {
		if r.Outcome == loop.OutcomeMisconfigured || r.Outcome == loop.OutcomeFailed {
			fmt.Fprintf(w, "%-11s %s  %s\n", r.Name, r.Outcome, r.Detail)
			continue
		}
		running := "not running"
		if r.Running {
			running = "running"
		}
		fmt.Fprintf(w, "%-11s %s [%s]\n", r.Name, running, where(r))
	}
}

// where says where a status row comes from (decisions D20).
func where(r loop.Row) string {
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
