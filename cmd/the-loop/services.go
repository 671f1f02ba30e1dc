package main

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// services is the verbs one CLI invocation uses, picked once: the service
// over REST when this state root's service answers (it holds the store),
// else the verbs in this process with the store opened around each
// transaction (decisions D3). Both give the same rows.
type services struct {
	Standing  loop.StandingService
	WorkItems loop.WorkItemService
	Events    loop.EventLog
}

// withServices loads the config (tolerantly for the recovery verbs, stop
// only: decisions D8), picks the services and runs fn with Ctrl-C
// cancelling it. Another project's service on the same address is never
// used.
func (a *App) withServices(tolerant bool, fn func(ctx context.Context, api services) error) error {
	var cfg *config.Config
	if tolerant {
		cfg = config.LoadTolerant(a.ConfigPath)
	} else {
		var err error
		if cfg, err = a.LoadConfig(); err != nil {
			return err
		}
	}
	ctx, stop := signalContext()
	defer stop()
	if cfg.Service.Enabled {
		remote, err := a.viaService(cfg)
		if err != nil {
			return err
		}
		if remote {
			c := a.client(cfg)
			return fn(ctx, services{Standing: c.Standing, WorkItems: c.WorkItems, Events: c})
		}
	}
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := a.Lifecycle(fixed(cfg), db, "cli", false)
	return fn(ctx, services{Standing: svc.Standing(fixed(cfg)), WorkItems: svc.WorkItems(fixed(cfg)), Events: svc})
}
