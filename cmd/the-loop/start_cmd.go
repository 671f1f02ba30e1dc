package main

import (
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// StartCmd is `the-loop start`: the service (detached, when enabled), then
// the standing sessions that auto-start, started by the service.
type StartCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: the report, as status gives it)."`
}

// Run starts.
func (c *StartCmd) Run(a *App, cfg *config.Config) error {
	ctx, stop := signalContext()
	defer stop()
	if err := refuseUnsafeService(cfg); err != nil {
		return err
	}
	rep, note := a.startAll(ctx, cfg)
	if c.Format == "json" {
		if err := writeJSON(a.Stdout, rep); err != nil {
			return err
		}
		return okExit(rep.OK)
	}
	renderLifecycle(a.Stdout, a.Stderr, rep, note)
	if cfg.Service.Enabled && cfg.Service.WebEnabled && len(rep.Services) > 0 && serviceUp(rep.Services[0]) {
		fmt.Fprintf(a.Stdout, "dashboard: %s (log in with `the-loop dashboard`)\n", dashboardURL(cfg))
	}
	return okExit(rep.OK)
}

// serviceUp reports whether start left the service running.
func serviceUp(s loop.ServiceRow) bool {
	return s.Running || s.Outcome == loop.OutcomeStarted || s.Outcome == loop.OutcomeAlreadyRunning
}
