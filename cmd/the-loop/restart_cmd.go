package main

import (
	"context"
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// RestartCmd is `the-loop restart`: stop, then start; conversations resume.
// A running session whose harness the restarted service could not find is
// not stopped (its row fails, saying why).
type RestartCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: {\"stopped\": report, \"started\": report})."`
}

// Run restarts.
func (c *RestartCmd) Run(a *App, cfg *config.Config) error {
	ctx, stop := signalContext()
	defer stop()
	if err := refuseUnsafeService(cfg); err != nil {
		return err
	}
	keep := a.unrestartable(ctx, cfg)
	if c.Format == "json" {
		down := a.stopAllBut(ctx, cfg, keep)
		up, _ := a.startAll(ctx, cfg)
		if err := writeJSON(a.Stdout, map[string]loop.Report{"stopped": down, "started": up}); err != nil {
			return err
		}
		return okExit(down.OK && up.OK)
	}
	fmt.Fprintln(a.Stdout, "stopping:")
	down := a.stopAllBut(ctx, cfg, keep)
	renderStop(a.Stdout, a.Stderr, down)
	fmt.Fprintln(a.Stdout, "starting:")
	up, note := a.startAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, up, note)
	return okExit(down.OK && up.OK)
}

// unrestartable is, before anything is stopped, the running sessions the
// restart would start again whose harness binary cannot be found where they
// would start: this process's environment, which the service the restart
// spawns inherits (and in which this CLI spawns them when the service is
// off). Each is a failed row saying why; the restart leaves it running.
func (a *App) unrestartable(ctx context.Context, cfg *config.Config) []loop.StandingRow {
	if cfg.StandingErr != nil || cfg.Standing == nil || !cfg.Standing.Enabled {
		return nil
	}
	svc := a.Lifecycle(fixed(cfg), nil, lifecycle.SourceRestart, false)
	var keep []loop.StandingRow
	for _, r := range a.statusAll(ctx, cfg).StandingSessions {
		if !r.Running || !r.AutoStart || r.Outcome == loop.OutcomeFailed {
			continue
		}
		if _, err := svc.HarnessBinary(cfg, r.Harness, r.Name); err != nil {
			r.Outcome = loop.OutcomeFailed
			r.Detail = "not restarted, left running: " + loop.ErrorMessage(err)
			keep = append(keep, r)
		}
	}
	return keep
}
