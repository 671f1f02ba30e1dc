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
	// Approvals are the service's over REST; in this process they are read
	// from the store, and a decision is refused (no hook waits here).
	Approvals loop.ApprovalService

	cfg    *config.Config // the config the services were picked under
	remote bool           // the service's, over REST
	stop   bool           // a stop's: its context has the stop's bound
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

// loading is how a command loads the CLI config: strictly (the default),
// tolerantly for a verb that reads but must not miss a store (events,
// logs), or tolerantly for a stop, which works from the records alone
// (decisions D8).
type loading int

const (
	loadStrict  loading = iota // LoadConfig
	loadReading                // LoadTolerant
	loadStop                   // LoadForStop
)

// picking is how a command's config is loaded and its services picked: a
// stop's services open a store a newer the-loop wrote read-only and carry
// the stop's bound; a verb that waits up to wait for an agent's answer (a
// say or a reply with --wait) carries waitBound's.
type picking struct {
	load loading
	wait time.Duration
}

// picker is a command picked other than strictly with no wait: it says how
// (the other commands take the zero picking).
type picker interface{ picking() picking }

// pickingOf is cmd's picking (the zero one when cmd is no picker).
func pickingOf(cmd any) picking {
	if p, ok := cmd.(picker); ok {
		return p.picking()
	}
	return picking{}
}

// loadFor loads the config as p says: a strict load's error refuses the
// command; the tolerant loads refuse only a moved store or an unsafe
// state root (reading), or nothing (stop).
func (a *App) loadFor(p picking) (*config.Config, error) {
	switch p.load {
	case loadReading:
		return a.LoadTolerant()
	case loadStop:
		return a.LoadForStop(), nil
	}
	return a.LoadConfig()
}

// pickServices picks the services under cfg once: the service's when it is
// enabled and this state root's answers, else this process's (done closes
// the store). Another project's service on the same address is never used.
func (a *App) pickServices(cfg *config.Config, p picking) (api services, done func(), err error) {
	remote := false
	if cfg.Service.Enabled {
		if remote, err = a.viaService(cfg); err != nil {
			return services{}, nil, err
		}
	}
	return a.servicesFor(cfg, remote, p)
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

// servicesFor are the services under cfg, picked by the caller (remote:
// this state root's service answers): the service's verbs over its socket,
// whose client's requests may last waitBound when it is longer than
// verbBound; else the verbs run in this process under cfg, with the store
// opened around each transaction (done closes it). A stop's store, when a
// newer the-loop wrote it — which every other verb refuses — is opened
// read-only (openForStop), so the stop still ends what it can decode and
// records nothing; newer is then that refusal. A stop, or a verb that only
// reads, where no store exists yet runs on an empty one and creates none
// (emptyStore).
func (a *App) servicesFor(cfg *config.Config, remote bool, p picking) (api services, done func(), err error) {
	stop := p.load == loadStop
	bound := waitBound(cfg, p.wait)
	if remote {
		c := a.clientFor(cfg, bound)
		return services{Standing: c.Standing, WorkItems: c.WorkItems, Events: c, Approvals: c.Approvals, cfg: cfg, remote: true, stop: stop, wait: bound}, func() {}, nil
	}
	if a.reads || stop {
		if db, done, ok, err := emptyStore(cfg); err != nil || ok { // nothing recorded: create no store
			if err != nil {
				return services{}, nil, err
			}
			return a.inProcess(cfg, db, nil, stop, bound), done, nil
		}
	}
	var db *store.DB
	var newer error
	if stop {
		db, newer, err = a.openForStop(cfg)
	} else {
		db, err = a.OpenStore(cfg, true)
	}
	if err != nil {
		return services{}, nil, err
	}
	if err := a.refuseInPane(cfg, db); err != nil {
		db.Close()
		return services{}, nil, err
	}
	return a.inProcess(cfg, db, newer, stop, bound), func() { db.Close() }, nil
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

// inProcess are the verbs of this process over db under cfg.
func (a *App) inProcess(cfg *config.Config, db *store.DB, newer error, stop bool, wait time.Duration) services {
	svc := a.Lifecycle(fixed(cfg), db, "cli", false)
	return services{Standing: svc.Standing(fixed(cfg)), WorkItems: svc.WorkItems(fixed(cfg)), Events: svc, Approvals: hearingOf(svc),
		cfg: cfg, newer: newer, stop: stop, wait: wait}
}
