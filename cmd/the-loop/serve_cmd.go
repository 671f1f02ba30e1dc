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
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// Version is the-loop's version, reported by health.
var Version = "0.1.0-dev"

// ServeCmd is `the-loop serve`: the service in the foreground.
type ServeCmd struct{}

// loopbackHosts may be bound without service.exposed.
var loopbackHosts = map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true}

// Run serves until SIGTERM or SIGINT, holding the store and the
// single-instance lock of its state root.
func (c *ServeCmd) Run(a *App) error {
	holder, err := config.NewHolder(a.ConfigPath)
	if err != nil {
		return err
	}
	cfg := holder.Current()
	if !loopbackHosts[cfg.Service.Host] && !cfg.Service.Exposed {
		return loop.Invalid("refusing to bind %s: set service.exposed: true to serve beyond loopback, and front it with an auth-terminating gateway (the API can spawn harness sessions)", cfg.Service.Host)
	}
	if cfg.Service.TokenEnv != "" && os.Getenv(cfg.Service.TokenEnv) == "" {
		return loop.Invalid("service.tokenEnv names %s, but that variable is empty or unset; export the token or remove service.tokenEnv", cfg.Service.TokenEnv)
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
	})
	log.Info("the-loop service listening", "url", "http://"+ln.Addr().String(), "pid", os.Getpid(), "config", a.ConfigPath)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
