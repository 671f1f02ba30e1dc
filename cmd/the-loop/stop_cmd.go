package main

import ()

// StopCmd is `the-loop stop`: every recorded standing session first, then
// the service. It works with the service down, not answering, or a config
// that no longer validates.
type StopCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: the report, as status gives it)."`
}

// Run stops.
func (c *StopCmd) Run(a *App) error {
	ctx, stop := signalContext()
	defer stop()
	rep := a.stopAll(ctx, a.LoadForStop())
	if c.Format == "json" {
		if err := writeJSON(a.Stdout, rep); err != nil {
			return err
		}
		return okExit(rep.OK)
	}
	renderStop(a.Stdout, a.Stderr, rep)
	return okExit(rep.OK)
}
