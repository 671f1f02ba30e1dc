package main

import "github.com/the-loop-dev/the-loop/config"

// StopCmd is `the-loop stop`: every recorded standing session first, then
// the service. It works with the service down, not answering, or a config
// that no longer validates or is not safe to load, from a safe state root.
type StopCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json: the report, as status gives it)."`
}

// picking: the config is loaded tolerantly for a stop (decisions D8).
func (c *StopCmd) picking() picking { return picking{load: loadStop} }

// Run stops.
func (c *StopCmd) Run(a *App, cfg *config.Config) error {
	ctx, stop := signalContext()
	defer stop()
	if err := checkStateRoot(cfg); err != nil {
		return err // its records could name anything to stop
	}
	rep := a.stopAll(ctx, cfg)
	if c.Format == "json" {
		if err := writeJSON(a.Stdout, rep); err != nil {
			return err
		}
		return okExit(rep.OK)
	}
	renderStop(a.Stdout, a.Stderr, rep)
	return okExit(rep.OK)
}
