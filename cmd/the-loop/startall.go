package main

// The orchestration behind start, stop, restart and status: the service
// (spawned detached, probed, ended) and the standing sessions, reached
// through the service when it answers for this state root, else in this
// process.

import (
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/sdk"
)

// refuseUnsafeService refuses, before anything is spawned, a start that
// could only half happen (startVerdict) and a service that `the-loop serve`
// would refuse to run (decisions D24: a host beyond loopback without
// service.exposed, an empty service.tokenEnv variable; a state root, token
// file or CLI config others may write), creating the operator's token file
// when there is none yet.
func refuseUnsafeService(cfg *config.Config) error {
	if err := startVerdict(cfg); err != nil {
		return err
	}
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
			row.Degraded = st.health.Degraded
		case st.answered:
			row.Outcome, row.Detail, held = "failed", st.foreign(cfg), st.holder
		case st.holder != 0:
			row.Outcome, row.Detail, held = "failed", fmt.Sprintf("a service (pid %d) holds %s but does not answer %s; run `the-loop stop`", st.holder, pidPath(cfg), serviceURL(cfg)), st.holder
		default:
			if pid, err := a.spawnService(cfg); err != nil {
				row.Outcome, row.Detail = "failed", err.Error()
			} else {
				row.Outcome, row.PID, row.Detail = "started", pid, fmt.Sprintf("pid %d, %s", pid, serviceURL(cfg))
				row.Degraded = a.probe(cfg, 2*time.Second).health.Degraded
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
	if held != 0 && !viaService {
		return []loop.StandingRow{failedRow(fmt.Sprintf("not started: the service (pid %d) holds the store; see the service row", held))}, false, ""
	}
	var res loop.StandingControlResult
	err := a.withStanding(cfg, viaService, func(api loop.StandingService) (err error) {
		res, err = api.Control(ctx, loop.StandingControlRequest{Verb: loop.VerbStart, AutoOnly: true})
		return err
	})
	if viaService {
		err = goesOnThere(ctx, cfg, err)
	}
	if err != nil {
		return []loop.StandingRow{failedRow(restFailure(cfg, err))}, false, ""
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
	if sdk.HTTPStatus(err) == nethttp.StatusUnauthorized {
		env := cfg.Service.TokenEnv
		if env == "" {
			env = "the variable service.tokenEnv names"
		}
		return fmt.Sprintf("the service refused this CLI (401): export %s (service.tokenEnv) with the service's token — %s", env, msg)
	}
	return msg
}

// withStanding runs fn with the standing verbs picked once: the service's
// over REST (remote), else this process's.
func (a *App) withStanding(cfg *config.Config, remote bool, fn func(api loop.StandingService) error) error {
	api, done, err := a.servicesFor(cfg, remote, picking{})
	if err != nil {
		return err
	}
	defer done()
	return fn(api.Standing)
}

// stopAll stops every recorded standing session, then the service. When
// this state root's service answers, it stops them; when it does not
// answer, or answers but refuses the stop (a CLI without the token), it is
// ended first and they are stopped in this process. A service of another
// state root answering at the address is left alone.
func (a *App) stopAll(ctx context.Context, cfg *config.Config) loop.Report {
	return a.stopAllBut(ctx, cfg, nil)
}

// stopAllBut is stopAll leaving the sessions keep names running (each
// keeps its row, a failed one saying why): what restart does with those
// it could not start again. The service is stopped all the same.
func (a *App) stopAllBut(ctx context.Context, cfg *config.Config, keep []loop.StandingRow) loop.Report {
	// `the-loop stop` ends within verbBound (a stop):
	// the sessions get their bound, the service what is left of it.
	deadline := time.Now().Add(verbBound(cfg, true))
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rep := loop.Report{StandingSessions: []loop.StandingRow{}}
	row := loop.ServiceRow{Service: "service", Enabled: cfg.Service.Enabled}
	var res loop.StandingControlResult
	var err, newer error
	st := a.probe(cfg, 2*time.Second)
	local := !st.ours
	if st.ours {
		err = a.withStanding(cfg, true, func(api loop.StandingService) (err error) {
			res, err = stopExcept(ctx, api, keep)
			return err
		})
		if err != nil && ctx.Err() == nil {
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
		// A store a newer the-loop wrote is opened read-only.
		var api services
		var done func()
		if api, done, err = a.servicesFor(cfg, false, picking{load: loadStop}); err == nil {
			newer = api.newer
			res, err = stopExcept(ctx, api.Standing, keep)
			done()
		}
	}
	standingOK := err == nil && res.OK && newer == nil
	if err != nil {
		rep.StandingSessions = []loop.StandingRow{failedRow(loop.ErrorMessage(err))}
	} else if res.Sessions != nil {
		rep.StandingSessions = res.Sessions
	}
	if len(keep) > 0 {
		rep.StandingSessions = append(rep.StandingSessions, keep...)
		standingOK = false
	}
	if newer != nil { // a newer store: stopped what could be, and says so (exit 1)
		rep.StandingSessions = append(rep.StandingSessions, failedRow(loop.ErrorMessage(newer)))
	}
	pid := servicePID(cfg)
	switch stopped, kerr := endService(cfg, max(time.Second, time.Until(deadline)-5*time.Second)); {
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

// stopExcept stops every recorded standing session but the ones keep
// names: all at once when keep is empty, else one by one.
func stopExcept(ctx context.Context, api loop.StandingService, keep []loop.StandingRow) (loop.StandingControlResult, error) {
	if len(keep) == 0 {
		return api.Control(ctx, loop.StandingControlRequest{Verb: loop.VerbStop})
	}
	rows, _, err := api.Status(ctx)
	if err != nil {
		return loop.StandingControlResult{}, err
	}
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k.Name] = true
	}
	out := loop.StandingControlResult{Sessions: []loop.StandingRow{}, OK: true}
	for _, r := range rows {
		if kept[r.Name] || r.Status == loop.StatusAbsent || r.Outcome == loop.OutcomeFailed || r.Outcome == loop.OutcomeMisconfigured {
			continue
		}
		res, err := api.Control(ctx, loop.StandingControlRequest{Verb: loop.VerbStop, Name: r.Name})
		if err != nil {
			return loop.StandingControlResult{}, err
		}
		out.Sessions = append(out.Sessions, res.Sessions...)
		out.OK = out.OK && res.OK
	}
	return out, nil
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
		if row.Degraded = st.health.Degraded; row.Degraded != "" {
			row.Healthy = false // it runs on its socket alone: status exits 1
		}
		rep := loop.Report{Services: []loop.ServiceRow{row}}
		if err := a.withStanding(cfg, true, func(api loop.StandingService) (err error) {
			rep.StandingSessions, rep.OK, err = api.Status(ctx)
			return err
		}); err != nil {
			return loop.Report{Services: []loop.ServiceRow{row}, StandingSessions: []loop.StandingRow{failedRow(restFailure(cfg, err))}}
		}
		rep.OK = rep.OK && row.Degraded == ""
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
	err := a.withStanding(cfg, false, func(api loop.StandingService) (err error) {
		rep.StandingSessions, ok, err = api.Status(ctx)
		return err
	})
	if err != nil {
		rep.StandingSessions, ok = []loop.StandingRow{failedRow(loop.ErrorMessage(err))}, false
	}
	if terr := runner.New(runner.Options{}).Available(); terr != nil {
		// Nothing can run or be seen running: never healthy.
		tmux := loop.StandingRow{Name: "tmux", Outcome: loop.OutcomeFailed, Detail: terr.Error()}
		rep.StandingSessions, ok = append(rep.StandingSessions, tmux), false
	}
	rep.OK = ok && (!row.Enabled || row.Healthy)
	return rep
}

// renderLifecycle writes start's report (original §7.5): the service row
// and the header on stdout, each session row on stdout or, when it failed,
// stderr (original §8.1) — and then, so that a log of stdout alone still
// shows it, a summary line on stdout when any row failed.
func renderLifecycle(stdout, stderr io.Writer, rep loop.Report, note string) {
	renderServices(stdout, rep)
	if note != "" {
		fmt.Fprintln(stdout, termLines(note))
	}
	renderSessionRows(stdout, stderr, rep)
}

// renderStop writes stop's report in the order stop acts: the sessions
// first, then the service.
func renderStop(stdout, stderr io.Writer, rep loop.Report) {
	renderSessionRows(stdout, stderr, rep)
	renderServices(stdout, rep)
}

// renderServices writes the service rows.
func renderServices(stdout io.Writer, rep loop.Report) {
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
		if s.Degraded != "" {
			line += "  degraded: " + termSafe(s.Degraded)
		}
		fmt.Fprintln(stdout, line)
	}
}

// renderSessionRows writes the header, the session rows and, when any
// failed, the summary line.
func renderSessionRows(stdout, stderr io.Writer, rep loop.Report) {
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
