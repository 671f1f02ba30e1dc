package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	nethttp "net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// Version is the-loop's version, reported by health.
var Version = "0.1.0-dev"

// ServeCmd is `the-loop serve`: the service in the foreground.
type ServeCmd struct{}

// Run serves until SIGTERM or SIGINT, holding the store and the
// single-instance lock of its state root.
func (c *ServeCmd) Run(a *App) error {
	holder, err := config.NewHolder(a.ConfigPath)
	if err != nil {
		return err
	}
	cfg := holder.Current()
	token, err := loophttp.CheckServe(cfg.Service, os.Getenv)
	if err != nil {
		return err
	}
	lock, err := lockPID(pidPath(cfg))
	if err != nil {
		return err
	}
	defer lock.release()
	db, err := a.OpenStore(cfg, false)
	if err != nil {
		return err
	}
	defer db.Close()
	log := slog.New(slog.NewTextHandler(a.Stderr, nil))
	svc := a.Lifecycle(cfg, db, "service", true)
	poller := &channels.Poller{Service: svc, WorkItems: &channels.Mirror{Service: svc}, Log: log}
	ln, err := net.Listen("tcp", cfg.Service.Addr())
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot listen on %s (service.host, service.port): %w", cfg.Service.Addr(), err)
	}
	srv := loophttp.NewServer(loophttp.Options{
		Lifecycle: svc,
		Config:    holder.Current,
		Version:   Version,
		Logger:    log,
		URL:       "http://" + ln.Addr().String(),
		Poller:    poller,
		Token:     token,
	})
	log.Info("the-loop service listening", "url", "http://"+ln.Addr().String(), "pid", os.Getpid(), "config", a.ConfigPath)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The Slack poll loop (decisions D22) ends before the store closes.
	var polling sync.WaitGroup
	pollCtx, endPolling := context.WithCancel(ctx)
	polling.Go(func() { poller.Run(pollCtx, holder.Current) })
	defer polling.Wait()
	defer endPolling()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, nethttp.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	log.Info("the-loop service shutting down")
	shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
