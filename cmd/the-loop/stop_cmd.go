package main

import ()

// StopCmd is `the-loop stop`: every recorded standing session first, then
// the service. It works with the service down, not answering, or a config
// that no longer validates.
type StopCmd struct{}

// Run stops.
func (c *StopCmd) Run(a *App) error {
	ctx, stop := signalContext()
	defer stop()
	rep := a.stopAll(ctx, a.LoadForStop())
	renderStop(a.Stdout, a.Stderr, rep)
	return okExit(rep.OK)
}
