package main

// StartCmd is `the-loop start`: the service (detached, when enabled), then
// the standing sessions that auto-start, started by the service.
type StartCmd struct{}

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
