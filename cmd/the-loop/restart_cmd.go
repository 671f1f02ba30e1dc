package main

import (
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
)

// RestartCmd is `the-loop restart`: stop, then start; conversations resume.
type RestartCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: {\"stopped\": report, \"started\": report})."`
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
	if c.Format == "json" {
		down := a.stopAll(ctx, cfg)
		up, _ := a.startAll(ctx, cfg)
		if err := writeJSON(a.Stdout, map[string]loop.Report{"stopped": down, "started": up}); err != nil {
			return err
		}
		return okExit(down.OK && up.OK)
	}
	fmt.Fprintln(a.Stdout, "stopping:")
	down := a.stopAll(ctx, cfg)
	renderStop(a.Stdout, a.Stderr, down)
	fmt.Fprintln(a.Stdout, "starting:")
	up, note := a.startAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, up, note)
	return okExit(down.OK && up.OK)
}
