package main

import (
	"context"
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// standingAPI is what the standing verbs need. The service answers it over
// REST when it runs; otherwise the verbs run in this process (decisions D3).
// Both give the same rows.
type standingAPI interface {
	ListStanding(ctx context.Context) ([]loop.StandingRow, error)
	ControlStanding(ctx context.Context, name, verb string, autoOnly bool) (loop.StandingControlResult, error)
	CreateStanding(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error)
	DeleteStanding(ctx context.Context, name string) (loop.StandingControlResult, error)
	SayStanding(ctx context.Context, name, text, actor string) (loop.SayResult, error)
}

// local runs the verbs in this process.
type local struct {
	cfg *config.Config
	svc *lifecycle.Service
}

func (l local) ListStanding(ctx context.Context) ([]loop.StandingRow, error) {
	return l.svc.ListStanding(ctx, l.cfg)
}
func (l local) ControlStanding(ctx context.Context, name, verb string, autoOnly bool) (loop.StandingControlResult, error) {
	return l.svc.ControlStanding(ctx, l.cfg, name, verb, autoOnly)
}
func (l local) CreateStanding(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	return l.svc.CreateStanding(ctx, l.cfg, req)
}
func (l local) DeleteStanding(ctx context.Context, name string) (loop.StandingControlResult, error) {
	return l.svc.DeleteStanding(ctx, l.cfg, name)
}
func (l local) SayStanding(ctx context.Context, name, text, actor string) (loop.SayResult, error) {
	return l.svc.SayStanding(ctx, l.cfg, name, text, actor)
}

// remote asks the service.
type remote struct{ c *loophttp.Client }

func (r remote) ListStanding(ctx context.Context) ([]loop.StandingRow, error) {
	return r.c.ListStanding(ctx)
}
func (r remote) ControlStanding(ctx context.Context, name, verb string, autoOnly bool) (loop.StandingControlResult, error) {
	return r.c.ControlStanding(ctx, name, verb, autoOnly)
}
func (r remote) CreateStanding(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	return r.c.CreateStanding(ctx, req)
}
func (r remote) DeleteStanding(ctx context.Context, name string) (loop.StandingControlResult, error) {
	return r.c.DeleteStanding(ctx, name)
}
func (r remote) SayStanding(ctx context.Context, name, text, actor string) (loop.SayResult, error) {
	return r.c.SayStanding(ctx, name, text, actor)
}

// withStanding runs fn against the service when it answers, else in this
// process; tolerant (stop only, decisions D8) loads the config tolerantly.
func (a *App) withStanding(tolerant bool, fn func(ctx context.Context, api standingAPI) error) error {
	return a.withBackend(tolerant,
		func(ctx context.Context, c *loophttp.Client) error { return fn(ctx, remote{c}) },
		func(ctx context.Context, cfg *config.Config, svc *lifecycle.Service) error {
			return fn(ctx, local{cfg, svc})
		})
}

// withBackend loads the config (tolerantly for the recovery verbs), then
// runs viaService when this state root's service answers — it holds the
// store — or inProcess with the store opened around each transaction
// (decisions D3), with Ctrl-C cancelling either. Another project's service
// on the same address is never used.
func (a *App) withBackend(tolerant bool,
	viaService func(ctx context.Context, c *loophttp.Client) error,
	inProcess func(ctx context.Context, cfg *config.Config, svc *lifecycle.Service) error,
) error {
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
	// Every verb has a bound, in this process and over REST alike.
	ctx, cancel := context.WithTimeout(ctx, verbBound(cfg, tolerant))
	defer cancel()
	if cfg.Service.Enabled {
		remote, err := a.viaService(cfg)
		if err != nil {
			return err
		}
		if remote {
			return goesOnThere(ctx, cfg, viaService(ctx, a.client(cfg)))
		}
	}
	if tolerant { // stop: a store a newer the-loop wrote is opened read-only
		db, newer, err := a.openForStop(cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := inProcess(ctx, cfg, a.Lifecycle(fixed(cfg), db, "cli", false)); err != nil {
			if newer != nil {
				fmt.Fprintln(a.Stderr, "error: "+loop.ErrorMessage(newer))
			}
			return err
		}
		return newer
	}
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return err
	}
	defer db.Close()
	return inProcess(ctx, cfg, a.Lifecycle(fixed(cfg), db, "cli", false))
}
