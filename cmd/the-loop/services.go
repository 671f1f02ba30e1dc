package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/store"
)

// services is the verbs one CLI invocation uses, picked once: the service
// over its socket when this state root's service answers (it holds the store),
// else the verbs in this process with the store opened around each
// transaction (decisions D3). Both give the same rows.
type services struct {
	Standing  loop.StandingService
	WorkItems loop.WorkItemService
	Events    loop.EventLog

	cfg    *config.Config // the config the services were picked under
	remote bool           // the service's, over REST
	// newer is set when a stop opened a store a newer the-loop wrote
	// read-only: the refusal, reported at the verb's end.
	newer error
	// wait, when above 0, is the bound of a verb that waits for an answer
	// (a say or a reply with --wait, waitBound) in place of verbBound.
	wait time.Duration
}

// bound is the verb's context: Ctrl-C cancels it and it ends at verbBound,
// in this process and over REST alike; stop is the stop's
// shorter bound.
func (api services) bound(stop bool) (context.Context, context.CancelFunc) {
	ctx, cancelSignal := signalContext()
	bound := verbBound(api.cfg, stop)
	if api.wait > 0 {
		bound = api.wait
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	return ctx, func() { cancel(); cancelSignal() }
}

// finish words the verb's error: a verb the service goes on with after
// this CLI stopped waiting says so (goesOnThere); a stop of a
// newer store ends with that refusal (exit 1), printed first when the verb
// failed too.
func (api services) finish(ctx context.Context, stderr io.Writer, err error) error {
	if api.remote {
		return goesOnThere(ctx, api.cfg, err)
	}
	if api.newer == nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(stderr, "error: "+loop.ErrorMessage(api.newer))
		return err
	}
	return api.newer
}

// withServices runs fn with the services picked once (pickServices) and
// Ctrl-C cancelling it: for the commands that check their own arguments
// before the config is loaded, and for the recovery verbs (tolerant).
func (a *App) withServices(tolerant bool, fn func(ctx context.Context, api services) error) error {
	return a.withServicesFor(tolerant, 0, fn)
}

// withWaitingServices is withServices for a verb that waits up to wait for
// an agent's answer (a say or a reply with --wait): its bound is
// waitBound's, and the sdk client's per-request timeout allows it.
func (a *App) withWaitingServices(wait time.Duration, fn func(ctx context.Context, api services) error) error {
	return a.withServicesFor(false, wait, fn)
}

// withServicesFor is withServices with the answer wait of a waiting verb
// (0: none).
func (a *App) withServicesFor(tolerant bool, wait time.Duration, fn func(ctx context.Context, api services) error) error {
	api, done, err := a.pickServicesFor(tolerant, wait)
	if err != nil {
		return err
	}
	defer done()
	ctx, stop := api.bound(tolerant)
	defer stop()
	return api.finish(ctx, a.Stderr, fn(ctx, api))
}

// pickServices loads the config (tolerantly for the recovery verbs, stop
// only: decisions D8) and picks the services: the service's when it is
// enabled and this state root's answers, else this process's (done closes
// the store). Another project's service on the same address is never used.
func (a *App) pickServices(tolerant bool) (api services, done func(), err error) {
	return a.pickServicesFor(tolerant, 0)
}

// waitBound is the bound of a verb that waits up to wait for an answer:
// the wait, the ready wait and the submit wait, plus 5 s; 0 when wait is 0.
func waitBound(cfg *config.Config, wait time.Duration) time.Duration {
	if wait <= 0 {
		return 0
	}
	tm := cfg.Routing.Tmux
	return wait + tm.ReadyTimeout() + tm.SubmitWait() + 5*time.Second
}

// pickServicesFor is pickServices for a verb that waits up to wait for an
// answer (0: none): the services carry its bound (waitBound).
func (a *App) pickServicesFor(tolerant bool, wait time.Duration) (api services, done func(), err error) {
	api, done, err = a.pickServicesIn(tolerant, wait)
	if err == nil {
		api.wait = waitBound(api.cfg, wait)
	}
	return api, done, err
}

func (a *App) pickServicesIn(tolerant bool, wait time.Duration) (api services, done func(), err error) {
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
			return a.remoteServicesFor(cfg, waitBound(cfg, wait)), func() {}, nil
		}
	}
	if tolerant {
		return a.stopServices(cfg)
	}
	return a.localServices(cfg)
}

// remoteServices are this state root's service's verbs, over REST.
func (a *App) remoteServices(cfg *config.Config) services {
	return a.remoteServicesFor(cfg, 0)
}

// remoteServicesFor is remoteServices whose client's requests may last
// bound when it is longer than verbBound (a waiting say's).
func (a *App) remoteServicesFor(cfg *config.Config, bound time.Duration) services {
	c := a.clientFor(cfg, bound)
	return services{Standing: c.Standing, WorkItems: c.WorkItems, Events: c, cfg: cfg, remote: true}
}

// localServices are the verbs run in this process under cfg, with the
// store opened around each transaction; done closes the store.
func (a *App) localServices(cfg *config.Config) (api services, done func(), err error) {
	if a.reads {
		if db, done, ok, err := emptyStore(cfg); err != nil || ok {
			if err != nil {
				return services{}, nil, err
			}
			return a.inProcess(cfg, db, nil), done, nil
		}
	}
	db, err := a.OpenStore(cfg, true)
	if err != nil {
		return services{}, nil, err
	}
	if err := a.refuseInPane(cfg, db); err != nil {
		db.Close()
		return services{}, nil, err
	}
	return a.inProcess(cfg, db, nil), func() { db.Close() }, nil
}

// refuseInPane refuses a verb an agent may not run when this process runs
// in the pane of a session db records as running (inProcessAgent).
func (a *App) refuseInPane(cfg *config.Config, db *store.DB) error {
	return inProcessAgent(context.Background(), a.verb, hearingOf(a.Lifecycle(fixed(cfg), db, "cli", false)))
}

// emptyStore is, for a verb that only reads, the store of a state root
// that has none yet (nor spooled hook payloads waiting for one): an empty
// store in a temporary directory, removed by done, so that reading creates
// nothing under the state root. ok is false when the state root has a
// store (or a spool): the verb then opens it as usual.
func emptyStore(cfg *config.Config) (db *store.DB, done func(), ok bool, err error) {
	if _, err := os.Stat(storeFile(cfg.StateDir())); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if spooled, _ := os.ReadDir(hearing.SpoolDir(cfg.StateDir())); len(spooled) > 0 {
		return nil, nil, false, nil
	}
	dir, err := os.MkdirTemp("", "the-loop-empty-")
	if err != nil {
		return nil, nil, false, loop.Internal("cannot make a temporary directory for an empty store: %w", err)
	}
	db, err = store.Open(filepath.Join(dir, "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, false, err
	}
	return db, func() { db.Close(); _ = os.RemoveAll(dir) }, true, nil
}

// stopServices are localServices for a stop: a store a newer the-loop
// wrote, which every other verb refuses, is opened read-only (openForStop),
// so the stop still ends what it can decode and records nothing; newer is
// then that refusal. Where no store exists, it stops from
// an empty one and creates none.
func (a *App) stopServices(cfg *config.Config) (api services, done func(), err error) {
	if db, done, ok, err := emptyStore(cfg); err != nil || ok { // nothing recorded: create no store
		if err != nil {
			return services{}, nil, err
		}
		return a.inProcess(cfg, db, nil), done, nil
	}
	db, newer, err := a.openForStop(cfg)
	if err != nil {
		return services{}, nil, err
	}
	if err := a.refuseInPane(cfg, db); err != nil {
		db.Close()
		return services{}, nil, err
	}
	return a.inProcess(cfg, db, newer), func() { db.Close() }, nil
}

// inProcess are the verbs of this process over db under cfg.
func (a *App) inProcess(cfg *config.Config, db *store.DB, newer error) services {
	svc := a.Lifecycle(fixed(cfg), db, "cli", false)
	return services{Standing: svc.Standing(fixed(cfg)), WorkItems: svc.WorkItems(fixed(cfg)), Events: svc, cfg: cfg, newer: newer}
}
