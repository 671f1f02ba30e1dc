package main

import (
	"fmt"
)

// RestartCmd is `the-loop restart`: stop, then start; conversations resume.
type RestartCmd struct{}

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
	renderStop(a.Stdout, a.Stderr, down)
	fmt.Fprintln(a.Stdout, "starting:")
	up, note := a.startAll(ctx, cfg)
	renderLifecycle(a.Stdout, a.Stderr, up, note)
	return okExit(down.OK && up.OK)
}
