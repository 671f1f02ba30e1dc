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

// withServices runs fn with the services picked once (pickServices) and
// Ctrl-C cancelling it: for the commands that check their own arguments
// before the config is loaded, and for the recovery verbs (tolerant).
func (a *App) withServices(tolerant bool, fn func(ctx context.Context, api services) error) error {
	api, done, err := a.pickServices(tolerant)
	if err != nil {
		return err
	}
	defer done()
	ctx, stop := signalContext()
	defer stop()
	return fn(ctx, api)
}

// pickServices loads the config (tolerantly for the recovery verbs, stop
// only: decisions D8) and picks the services: the service's when it is
// enabled and this state root's answers, else this process's (done closes
// the store). Another project's service on the same address is never used.
func (a *App) pickServices(tolerant bool) (api services, done func(), err error) {
	var cfg *config.Config
	if tolerant {
		cfg = a.LoadForStop()
	} else if cfg, err = a.LoadConfig(); err != nil {
		return services{}, nil, err
	}
	if cfg.Service.Enabled {
		remote, err := a.viaService(cfg)
		if err != nil {
			return services{}, nil, err
		}
		if remote {
			return a.remoteServices(cfg), func() {}, nil
		}
	}
	return a.localServices(cfg)
}

// remoteServices are this state root's service's verbs, over REST.
func (a *App) remoteServices(cfg *config.Config) services {
	c := a.client(cfg)
	return services{Standing: c.Standing, WorkItems: c.WorkItems, Events: c}
}

// localServices are the verbs run in this process under cfg, with the
// store opened around each transaction; done closes the store.
func (a *App) localServices(cfg *config.Config) (api services, done func(), err error) {
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return services{}, nil, err
	}
	svc := a.Lifecycle(fixed(cfg), db, "cli", false)
	return services{Standing: svc.Standing(fixed(cfg)), WorkItems: svc.WorkItems(fixed(cfg)), Events: svc}, func() { db.Close() }, nil
}
