//go:build !loop_omit_service

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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/channels/github"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/hearing"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/optoken"
	"github.com/the-loop-dev/the-loop/internal/servicelog"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/metrics"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/supervision"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// Run serves until SIGTERM or SIGINT (SIGHUP re-reads the config), holding the store and the
// single-instance lock of its state root. Its steps come in this order
// because each needs the ones before: the log and its redactor before
// anything can fail, the token and the lock before the store is opened,
// the store before the rooms over it, the listeners before the server,
// the socket's record (hooks find the service by it) once all of these
// stand; what each opened is closed in the reverse order.
func (c *ServeCmd) Run(a *App) error {
	holder, err := config.NewHolder(a.ConfigPath)
	if err != nil {
		return err
	}
	cfg := holder.Current()
	log, closeLog := servicelog.New(cfg.Service.Log, c.LogFile, a.Stderr)
	defer closeLog.Close()
	red, log, current := redactedLog(holder, cfg, log)
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
	db, err := a.openServiceStore(cfg, meter, log)
	if err != nil {
		return err
	}
	defer db.Close()
	w := a.wireService(current, db, holder, red, token, meter, log)
	sock, ln, degraded, url, err := listenService(cfg)
	if err != nil {
		return err
	}
	defer sock.Close()
	srv := w.server(cfg, current, url, token, meter, red, log)
	srv.SetDegraded(degraded)
	// Hook commands find the socket through the state root; payloads
	// spooled while no one held the store are applied first.
	if err := writeSocketRecord(cfg.StateDir(), cfg.SocketPath()); err != nil {
		closeListener(ln)
		return err
	}
	defer os.Remove(socketRecordPath(cfg.StateDir()))
	w.ready(a, cfg, degraded, url, ln != nil, log)
	return c.serve(srv, sock, ln, holder, current, w, log)
}

// redactedLog makes the one redactor (the events, the log, Slack posts,
// MCP answers) and puts it in front of log, which the holder then logs its
// reloads through. The redactor reads the config in force without
// reloading it (a reload logs through it); current is the holder's config,
// noting the keys a reload changed that take effect only on restart.
func redactedLog(holder *config.Holder, cfg *config.Config, log *slog.Logger) (*redact.Redactor, *slog.Logger, func() *config.Config) {
	var last lastConfig
	last.p.Store(cfg)
	red := newRedactor(last.get)
	log = red.Logger(log)
	holder.Logger = log
	current := last.track(restartNotes(holder.Current, cfg, log))
	return red, log, current
}

// lastConfig is the config the service's code last got from its source:
// what the service's redactor reads, since asking config.Holder.Current
// itself could reload the file, and a reload logs through that very
// redactor.
type lastConfig struct{ p atomic.Pointer[config.Config] }

// track wraps current so that every config it returns is the last one.
func (l *lastConfig) track(current func() *config.Config) func() *config.Config {
	return func() *config.Config {
		cfg := current()
		l.p.Store(cfg)
		return cfg
	}
}

// get is the last config tracked.
func (l *lastConfig) get() *config.Config { return l.p.Load() }

// openServiceStore opens the store for the service, held for its life: the
// metrics count from the events the store commits, and the service log
// records every exit, restart and spawn failure (and the starts and stops
// around them) as the store commits them.
func (a *App) openServiceStore(cfg *config.Config, meter *metrics.Metrics, log *slog.Logger) (*store.DB, error) {
	logEvents := servicelog.Events(log)
	return a.openStoreHeard(cfg, false, func(evs []loop.Event) {
		meter.Observe(evs)
		logEvents(evs)
	})
}

// wired is the service's rooms over its store, as Run wires them: the
// verbs, the standing verbs counted by the metrics, the supervisor and the
// Slack poller.
type wired struct {
	svc      *lifecycle.Service
	standing loop.StandingService
	sup      *supervision.Supervisor
	poller   *channels.Poller
}

// wireService wires the verbs over db under current: the redactor that
// knows the operator's token and the recorded agent credentials, the
// metrics' session counts, the supervisor (set before anything serves:
// rows and hooks read it) and the Slack poller.
func (a *App) wireService(current func() *config.Config, db *store.DB, holder *config.Holder, red *redact.Redactor, token string, meter *metrics.Metrics, log *slog.Logger) wired {
	svc := a.Lifecycle(current, db, "service", true)
	hearingOf(svc).ApprovalWait = func() time.Duration { return current().Standing.ApprovalWait() }
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
	poller := &channels.Poller{Redactor: red, Threads: &threadlog.Log{DB: svc.DB, Events: svc}, Standing: standing, WorkItems: &github.Mirror{WorkItems: svc.WorkItems(current), Events: svc}, Approvals: hearingOf(svc), Secrets: func(cfg *config.Config) []string { return credential.SecretValues(cfg, os.Getenv) }, Log: log,
		Observe: meter.PollCycle}
	return wired{svc: svc, standing: standing, sup: sup, poller: poller}
}

// listenService opens the service's socket, then its TCP listener (nil
// when it runs on its socket alone; degraded then says why); url is where
// it answers. When the TCP listener fails, the socket is closed again.
func listenService(cfg *config.Config) (sock, ln net.Listener, degraded, url string, err error) {
	sock, err = listenSocket(cfg)
	if err != nil {
		return nil, nil, "", "", err
	}
	ln, degraded, err = listenTCP(cfg)
	if err != nil {
		sock.Close()
		return nil, nil, "", "", err
	}
	url = "unix:" + cfg.SocketPath()
	if ln != nil {
		url = "http://" + ln.Addr().String()
	}
	return sock, ln, degraded, url, nil
}

// server is the service's HTTP server (REST, MCP, the dashboard) over the
// wired rooms.
func (w wired) server(cfg *config.Config, current func() *config.Config, url, token string, meter *metrics.Metrics, red *redact.Redactor, log *slog.Logger) *loophttp.Server {
	svc := w.svc
	return loophttp.NewServer(loophttp.Options{
		Standing:    w.standing,
		WorkItems:   svc.WorkItems(current),
		Events:      svc,
		Recorder:    svc,
		Metrics:     meter,
		Config:      current,
		Version:     loop.Version(),
		Logger:      log,
		URL:         url,
		Poller:      w.poller,
		Token:       token,
		TokenSource: optoken.TokenSource(cfg),
		NoAuth:      cfg.Service.AuthOff(),
		Agents:      hearingOf(svc),
		Panes:       hearingOf(svc),
		Hooks:       svc.Hearing,
		Approvals:   hearingOf(svc),
		StateRoot:   cfg.StateDir(),
		Redactor:    red,
		Environment: func(context.Context) loop.Environment { return ownEnvironment(current()) },
	})
}

// ready finishes the start once the socket is recorded: an older
// version's address record is removed, the payloads spooled while no one
// held the store are applied, and the log (and, for a degraded service,
// stderr) says where the service listens.
func (w wired) ready(a *App, cfg *config.Config, degraded, url string, tcp bool, log *slog.Logger) {
	_ = os.Remove(filepath.Join(cfg.StateDir(), "local", "service.addr")) // an older version's record
	if err := w.svc.Hearing.ApplySpool(context.Background(), cfg.StateDir()); err != nil {
		log.Warn("could not apply the spooled hook payloads", "spool", hearing.SpoolDir(cfg.StateDir()), "error", err)
	}
	if err := hearingOf(w.svc).WithdrawStale(); err != nil {
		log.Warn("could not withdraw the approvals an earlier service held", "error", err)
	}
	if degraded != "" {
		log.Warn(degraded)
		fmt.Fprintln(a.Stderr, "warning: "+degraded)
	}
	log.Info("the-loop service listening", "socket", cfg.SocketPath(), "url", url, "pid", os.Getpid(), "config", a.ConfigPath)
	if cfg.Service.WebEnabled && tcp {
		log.Info("the dashboard", "url", url+"/", "login", "the-loop dashboard")
	}
}

// serve runs the service until a listener fails or SIGTERM or SIGINT
// comes: the Slack poll loop (decisions D22), the servers on the socket
// and the TCP listener, the supervisor, the SIGHUP reload and (unless
// --no-autostart) the autoStart sessions' start. The background work ends
// before it returns — before the store closes; a signal shuts the server
// down within 30 s.
func (c *ServeCmd) serve(srv *loophttp.Server, sock, ln net.Listener, holder *config.Holder, current func() *config.Config, w wired, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup, endHup := hangups()
	defer endHup()
	// The Slack poll loop (decisions D22) ends before the store closes.
	var polling sync.WaitGroup
	pollCtx, endPolling := context.WithCancel(ctx)
	polling.Go(func() { w.poller.Run(pollCtx, current) })
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
	background.Go(func() { w.sup.Run(bgCtx) })
	background.Go(func() { reloadOnHangup(bgCtx, hup, holder, current, w.svc, log) })
	if !c.NoAutostart {
		background.Go(func() { autoStart(bgCtx, w.svc, current(), log) })
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
	hearingOf(w.svc).Withdraw("") // the held PermissionRequest hooks answer nothing: their dialogs are the terminals'
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

// pidLock is the service's single-instance lock: an exclusive flock on the
// pid file, held for the service's life. A probe (servicePID) tests it with
// a shared flock held for an instant; a service that finds the lock taken
// tells the two apart — a shared lock it can take too means only probes
// hold it, and it tries again — so a probe never makes the service refuse
// to start.
type pidLock struct{ f *os.File }

// lockPID takes the lock or names the process that holds it.
func lockPID(path string) (*pidLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(pidLockWait)
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, loop.Errorf(loop.EINTERNAL, "could not lock %s: %v", path, err)
		}
		// Held. A shared lock is refused only while a service holds it
		// exclusively; granted, only probes were in the way.
		if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
			f.Close()
			return nil, loop.Errorf(loop.EINTERNAL, "the-loop service is already running for this state root (pid %d, %s); stop it with `the-loop stop`", holderPID(path), path)
		}
		_ = flock(f, syscall.LOCK_UN)
		if time.Now().After(deadline) {
			f.Close()
			return nil, loop.Errorf(loop.EINTERNAL, "could not lock %s within %s: other processes keep probing it; try again", path, pidLockWait)
		}
		time.Sleep(pidLockPoll)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &pidLock{f: f}, nil
}

func (l *pidLock) release() {
	_ = l.f.Truncate(0)
	_ = l.f.Close()
}

// ownEnvironment is this process's view of its environment: tmux and each
// configured harness binary on its PATH, as doctor checks them. The service
// answers GET /api/v1/environment with it.
func ownEnvironment(cfg *config.Config) loop.Environment {
	env := loop.Environment{PID: os.Getpid(), Path: os.Getenv("PATH")}
	for _, ch := range append([]check{doctorTmux()}, doctorHarnesses(cfg)...) {
		env.Checks = append(env.Checks, loop.EnvironmentCheck(ch))
	}
	return env
}
