package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	nethttp "net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/channels/github"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/hearing"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/internal/servicelog"
	"github.com/the-loop-dev/the-loop/metrics"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// ServeCmd is `the-loop serve`: the service in the foreground. It starts
// the standing sessions that auto-start (unless --no-autostart: `the-loop
// start` starts them itself) and supervises every running one.
type ServeCmd struct {
	NoAutostart bool   `name:"no-autostart" help:"Do not start the standing sessions that auto-start (the-loop start starts them itself)."`
	LogFile     string `name:"log-file" placeholder:"FILE" help:"Write the service log to FILE, rotated as service.log says (the-loop start passes <state.root>/logs/service.log); standard error without it."`
}

// Run serves until SIGTERM or SIGINT (SIGHUP re-reads the config), holding the store and the
// single-instance lock of its state root.
func (c *ServeCmd) Run(a *App) error {
	holder, err := config.NewHolder(a.ConfigPath)
	if err != nil {
		return err
	}
	cfg := holder.Current()
	log, closeLog := servicelog.New(cfg.Service.Log, c.LogFile, a.Stderr)
	defer closeLog.Close()
	var last lastConfig // the redactor reads the config in force without reloading it (a reload logs through it)
	last.p.Store(cfg)
	red := newRedactor(last.get) // one redactor: the events, the log, Slack posts, MCP answers
	log = red.Logger(log)
	holder.Logger = log
	current := last.track(restartNotes(holder.Current, cfg, log))
	token, err := serveToken(cfg)
	if err != nil {
		return err
	}
	lock, err := lockPID(pidPath(cfg))
	if err != nil {
		return err
	}
	defer lock.release()
	// The metrics count from the events the store commits, every say's
	// outcome, every request and every poll cycle (package metrics).
	meter := metrics.New(loop.Version())
	// The service log records every exit, restart and spawn failure (and
	// the starts and stops around them) as the store commits them.
	logEvents := servicelog.Events(log)
	db, err := a.openStoreHeard(cfg, false, func(evs []loop.Event) {
		meter.Observe(evs)
		logEvents(evs)
	})
	if err != nil {
		return err
	}
	defer db.Close()
	svc := a.Lifecycle(current, db, "service", true)
	holder.OnRefused(reloadRefused(svc, log))
	svc.Redactor = red
	red.SetValue("service.token", token)
	if err := svc.RememberCredentials(); err != nil {
		log.Warn("could not read the recorded agent credentials for redaction", "error", err)
	}
	meter.CountSessions(metrics.Rows{Standing: svc.Standing(current), WorkItems: svc.WorkItems(current)})
	standing := meter.Standing(svc.Standing(current))
	// Set before anything serves: rows and hooks read it (it runs below).
	sup := supervisor(current, svc, log)
	svc.Supervisor = sup
	poller := &channels.Poller{Redactor: red, Threads: &threadlog.Log{DB: svc.DB, Events: svc}, Standing: standing, WorkItems: &github.Mirror{WorkItems: svc.WorkItems(current), Events: svc}, Secrets: func(cfg *config.Config) []string { return credential.SecretValues(cfg, os.Getenv) }, Log: log,
		Observe: meter.PollCycle}
	sock, err := listenSocket(cfg)
	if err != nil {
		return err
	}
	defer sock.Close()
	ln, degraded, err := listenTCP(cfg)
	if err != nil {
		return err
	}
	url := "unix:" + cfg.SocketPath()
	if ln != nil {
		url = "http://" + ln.Addr().String()
	}
	srv := loophttp.NewServer(loophttp.Options{
		Standing:    standing,
		WorkItems:   svc.WorkItems(current),
		Events:      svc,
		Recorder:    svc,
		Metrics:     meter,
		Config:      current,
		Version:     loop.Version(),
		Logger:      log,
		URL:         url,
		Poller:      poller,
		Token:       token,
		TokenSource: loophttp.TokenSource(cfg),
		NoAuth:      cfg.Service.AuthOff(),
		Agents:      hearingOf(svc),
		Panes:       hearingOf(svc),
		Hooks:       svc.Hearing,
		StateRoot:   cfg.StateDir(),
		Redactor:    red,
		Environment: func(context.Context) loop.Environment { return ownEnvironment(current()) },
	})
	srv.SetDegraded(degraded)
	// Hook commands find the socket through the state root; payloads
	// spooled while no one held the store are applied first.
	if err := writeSocketRecord(cfg.StateDir(), cfg.SocketPath()); err != nil {
		closeListener(ln)
		return err
	}
	defer os.Remove(socketRecordPath(cfg.StateDir()))
	_ = os.Remove(filepath.Join(cfg.StateDir(), "local", "service.addr")) // an older version's record
	if err := svc.Hearing.ApplySpool(context.Background(), cfg.StateDir()); err != nil {
		log.Warn("could not apply the spooled hook payloads", "spool", hearing.SpoolDir(cfg.StateDir()), "error", err)
	}
	if degraded != "" {
		log.Warn(degraded)
		fmt.Fprintln(a.Stderr, "warning: "+degraded)
	}
	log.Info("the-loop service listening", "socket", cfg.SocketPath(), "url", url, "pid", os.Getpid(), "config", a.ConfigPath)
	if cfg.Service.WebEnabled && ln != nil {
		log.Info("the dashboard", "url", url+"/", "login", "the-loop dashboard")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup, endHup := hangups()
	defer endHup()
	// The Slack poll loop (decisions D22) ends before the store closes.
	var polling sync.WaitGroup
	pollCtx, endPolling := context.WithCancel(ctx)
	polling.Go(func() { poller.Run(pollCtx, current) })
	defer polling.Wait()
	defer endPolling()
	served := make(chan error, 2)
	go func() { served <- srv.Serve(sock) }()
	if ln != nil {
		go func() { served <- srv.Serve(ln) }()
	}
	// The supervisor, the autoStart sessions' start and the SIGHUP reload
	// end before the store closes.
	var background sync.WaitGroup
	defer background.Wait()
	bgCtx, endBackground := context.WithCancel(ctx)
	defer endBackground()
	background.Go(func() { sup.Run(bgCtx) })
	background.Go(func() { reloadOnHangup(bgCtx, hup, holder, current, svc, log) })
	if !c.NoAutostart {
		background.Go(func() { autoStart(bgCtx, svc, current(), log) })
	}
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

// restartNotes wraps the holder's Current: when it hands out a reloaded
// config, the keys that only take effect when the service restarts
// (service.host, service.port, service.socket, service.tokenEnv, service.auth, eventLog.maxEvents,
// eventLog.maxBytes, state.root, service.log) and changed from the ones it started with are logged, once
// per reload. Everything else is read per request.
func restartNotes(current func() *config.Config, started *config.Config, log *slog.Logger) func() *config.Config {
	var mu sync.Mutex
	last := started
	return func() *config.Config {
		cfg := current()
		mu.Lock()
		defer mu.Unlock()
		if cfg == last {
			return cfg
		}
		last = cfg
		if keys := restartKeys(started, cfg); len(keys) > 0 {
			log.Warn("the CLI config changed keys that take effect on restart; run `the-loop restart` to apply them",
				"keys", strings.Join(keys, ", "))
		}
		return cfg
	}
}

// restartKeys names the keys a running service keeps from its start whose
// values differ between old and new.
func restartKeys(old, new *config.Config) []string {
	var keys []string
	changed := func(key string, differ bool) {
		if differ {
			keys = append(keys, key)
		}
	}
	changed("service.host", old.Service.Host != new.Service.Host)
	changed("service.port", old.Service.Port != new.Service.Port)
	changed("service.socket", old.SocketPath() != new.SocketPath())
	changed("service.tokenEnv", old.Service.TokenEnv != new.Service.TokenEnv)
	changed("service.auth", old.Service.Auth != new.Service.Auth)
	changed("eventLog.maxEvents", old.EventLog.MaxEvents != new.EventLog.MaxEvents)
	changed("eventLog.maxBytes", old.EventLog.MaxBytes != new.EventLog.MaxBytes)
	changed("state.root", old.StateDir() != new.StateDir())
	changed("service.log", old.Service.Log != new.Service.Log)
	return keys
}

// serveToken is what the process that serves checks before it binds
// (CheckServe, then the files: a state root, token file or CLI config
// another user owns or others may write is refused, naming it) and the
// operator's token it asks for: the variable service.tokenEnv names, else
// <state.root>/service.token, created 0600 at the first start and kept
// across restarts ("" with service.auth: none).
func serveToken(cfg *config.Config) (string, error) {
	token, err := loophttp.CheckServe(cfg.Service, os.Getenv)
	if err != nil {
		return "", err
	}
	if err := loophttp.EnsureStateRoot(cfg.StateDir()); err != nil {
		return "", err
	}
	if cfg.Path != "" {
		if err := fileperm.Check(cfg.Path, "CLI config (the settings file)"); err != nil {
			return "", err
		}
	}
	if token != "" || cfg.Service.AuthOff() {
		return token, nil
	}
	return loophttp.OperatorToken(cfg, os.Getenv, true)
}

// writeSocketRecord records the socket the service listens on (0600), for
// the hook command and sdk.Local, which never read the config.
func writeSocketRecord(stateRoot, socket string) error {
	path := socketRecordPath(stateRoot)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot record the service's socket in %s: %w; check that state.root is writable", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(socket+"\n"), 0o600); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot record the service's socket in %s: %w; check that state.root is writable", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot record the service's socket in %s: %w", path, err)
	}
	return nil
}
