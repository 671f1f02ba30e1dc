//go:build !loop_omit_service

package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/supervision"
)

// supervisor is the service's supervisor of svc's standing sessions: it
// probes panes with runners of its own, not the service's cached ones, so
// it sees exit statuses and never waits behind the liveness cache.
func supervisor(current func() *config.Config, svc *lifecycle.Service, log *slog.Logger) *supervision.Supervisor {
	var mu sync.Mutex
	runners := map[string]loop.Runner{}
	return &supervision.Supervisor{
		Service: svc,
		Config:  current,
		Log:     log,
		Runner: func(socket string) loop.Runner {
			mu.Lock()
			defer mu.Unlock()
			r, ok := runners[socket]
			if !ok {
				r = runner.New(runner.Options{Socket: socket, Logger: log})
				runners[socket] = r
			}
			return r
		},
	}
}

// autoStart is serve's start of the standing sessions that auto-start, as
// `the-loop start` starts them: each row goes to the log (the event log
// gets the start events).
func autoStart(ctx context.Context, svc *lifecycle.Service, cfg *config.Config, log *slog.Logger) {
	rows, ok, disabled := svc.StartAutoStanding(ctx, cfg)
	if disabled {
		log.Info("standing sessions: disabled (standingSessions.enabled is false)")
		return
	}
	for _, r := range rows {
		log.Info("standing session", "name", r.Name, "outcome", r.Outcome, "detail", r.Detail)
	}
	if !ok {
		log.Warn("not every standing session that auto-starts is running; see the rows above and `the-loop status`")
	}
}

// hangups catches SIGHUP (which would end the process) from now on.
func hangups() (<-chan os.Signal, func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}

// reloadOnHangup re-reads the config at every SIGHUP on hup until ctx ends
// (service.reloaded, the holder's rules: a file that does not load keeps
// the last good config); the service keeps running and sessions are left
// alone. The event's changed says whether the config in use differs from
// the one at the previous service.reloaded (at the first, the service's
// start): a request that read the edited file before the signal came has
// already put it in use, and the SIGHUP still reports it.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, holder *config.Holder, current func() *config.Config, svc *lifecycle.Service, log *slog.Logger) {
	last := current()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		_, problem := holder.Reload()
		now := current() // and the restart-only keys' note, when they changed
		changed := now != last
		last = now
		ev := loop.Event{TS: time.Now().UTC(), Source: "service", Event: "service.reloaded", Level: loop.LevelInfo, PID: os.Getpid(),
			Fields: []loop.Field{loop.F("path", holder.Path()), loop.F("changed", changed)}}
		if problem != nil {
			ev.Level = loop.LevelWarning
			ev.Fields = append(ev.Fields, loop.F("error", problem.Error()))
		}
		if err := svc.Emit(ev); err != nil {
			log.Warn("cannot record service.reloaded", "error", err)
		}
		log.Info("SIGHUP: re-read the CLI config", "path", holder.Path(), "changed", changed)
	}
}

// reloadRefused records service.reload_refused (warning) when the holder
// refuses a changed config the ownership rules reject (fileperm.Check): the
// last good config stays in use.
func reloadRefused(svc *lifecycle.Service, log *slog.Logger) func(path string, problem error) {
	return func(path string, problem error) {
		ev := loop.Event{TS: time.Now().UTC(), Source: "service", Event: "service.reload_refused", Level: loop.LevelWarning, PID: os.Getpid(),
			Fields: []loop.Field{loop.F("path", path), loop.F("error", problem.Error())}}
		if err := svc.Emit(ev); err != nil {
			log.Warn("cannot record service.reload_refused", "error", err)
		}
	}
}
