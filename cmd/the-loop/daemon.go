package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/servicelog"
	"github.com/the-loop-dev/the-loop/sdk"
)

// The service's files under the state root.
func pidPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), "local", "service.pid") }
func logPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), "logs", "service.log") }

// serviceURL is where the CLI reaches the service.
func serviceURL(cfg *config.Config) string { return "http://" + cfg.Service.Addr() }

// client is the typed client for the configured service, over its socket
// (no token is sent; the service reads who calls from the
// kernel). Every request ends within the verb's bound (verbBound) even
// when a caller's context has none.
func (a *App) client(cfg *config.Config) *sdk.Client {
	return a.clientFor(cfg, 0)
}

// clientFor is client whose requests may last bound when it is longer
// than verbBound: a waiting say's (waitBound).
func (a *App) clientFor(cfg *config.Config, bound time.Duration) *sdk.Client {
	return sdk.Socket(cfg.SocketPath(), sdk.WithHTTPClient(&nethttp.Client{Timeout: requestTimeout(cfg, bound)}))
}

// requestTimeout is the sdk client's per-request timeout: verbBound, or
// bound when longer (a waiting say's, waitBound).
func requestTimeout(cfg *config.Config, bound time.Duration) time.Duration {
	return max(verbBound(cfg, false), bound)
}

// pidLockWait bounds how long lockPID keeps trying while only probes hold
// the lock (each holds it for microseconds); pidLockPoll is its retry.
const (
	pidLockWait = 10 * time.Second
	pidLockPoll = time.Millisecond
)

// flock is syscall.Flock retried on EINTR.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// readPID reads the pid file.
func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// holderPID reads the pid of the service holding the lock, waiting a
// moment for one that has just taken it to write its pid (0 when it never
// does).
func holderPID(path string) int {
	for range 100 {
		if pid, err := readPID(path); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(pidLockPoll)
	}
	return 0
}

// servicePID returns the pid of the service holding the lock, or 0 when no
// service holds it.
func servicePID(cfg *config.Config) int {
	path := pidPath(cfg)
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = flock(f, syscall.LOCK_UN)
		return 0 // nobody holds it
	}
	return holderPID(path)
}

// serviceState is what the CLI finds on this config's socket. Two
// projects may configure one service.socket: the service that answers there
// is this config's only when its health names this config's state root
// (and, when a service holds this state root's pid file, that service's
// pid).
type serviceState struct {
	answered bool        // something answered health
	health   loop.Health // what it said
	ours     bool        // it is this state root's service
	holder   int         // the pid holding this state root's pid file (0: none)
}

// probe asks health over the socket within d (a socket another uid owns
// is never dialled: sdk.Socket).
func (a *App) probe(cfg *config.Config, d time.Duration) serviceState {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	st := serviceState{holder: servicePID(cfg)}
	h, err := a.client(cfg).Health(ctx)
	if err != nil {
		return st
	}
	st.answered, st.health = true, h
	st.ours = sameDir(h.StateRoot, cfg.StateDir()) && (st.holder == 0 || h.PID == st.holder)
	return st
}

// foreign describes the other service answering at this config's address.
func (st serviceState) foreign(cfg *config.Config) string {
	root := st.health.StateRoot
	if root == "" {
		root = "unknown"
	}
	return fmt.Sprintf("another the-loop service answers on %s (state root %s, pid %d), not this config's (state root %s); give each project its own service.socket",
		cfg.SocketPath(), root, st.health.PID, cfg.StateDir())
}

// held is the refusal of a verb that would open a store this state root's
// service holds while another service answers at the address.
func (st serviceState) held(cfg *config.Config) error {
	return loop.Errorf(loop.EINTERNAL, "this state root's service (pid %d) holds the store, but %s; stop it with `the-loop stop`, fix service.socket and start it again",
		st.holder, st.foreign(cfg))
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// viaService says whether a verb goes through the service (it answers and
// is ours) or runs in this process; an error when it can do neither — this
// state root's service holds the store while another one answers at the
// address. A foreign service is never used, and warned about on stderr.
func (a *App) viaService(cfg *config.Config) (bool, error) {
	st := a.probe(cfg, 2*time.Second)
	switch {
	case st.ours:
		return true, nil
	case !st.answered:
		return false, nil
	case st.holder != 0:
		return false, st.held(cfg)
	}
	fmt.Fprintf(a.Stderr, "warning: %s; running in this process\n", termSafe(st.foreign(cfg)))
	return false, nil
}

// spawnService starts `the-loop serve` detached, in the caller's working
// directory and environment, and waits up to 15 s for its health. A start
// that fails quotes the last lines the service wrote to its log. Under a
// systemd user manager (wantScope) the service and its tmux server go into
// a scope of their own, so the login's end does not end them; a scope that
// cannot be made falls back to a plain start, saying so.
func (a *App) spawnService(cfg *config.Config) (int, error) {
	if systemdUser() && !insideUnit() {
		if w := lingerWarning(logindConfs()); w != "" {
			fmt.Fprintln(a.Stderr, termSafe(w))
		}
	}
	if wantScope(cfg) {
		pid, err := a.spawnServiceIn(cfg, true)
		if !errors.Is(err, errExitedAtStart) {
			return pid, err
		}
		fmt.Fprintf(a.Stderr, "warning: could not start the service in a systemd scope (%s); starting it without one\n", termSafe(err.Error()))
	}
	return a.spawnServiceIn(cfg, false)
}

// errExitedAtStart wraps a service that exited before it answered.
var errExitedAtStart = errors.New("the service exited at start")

// spawnServiceIn is spawnService, in a systemd scope or not.
func (a *App) spawnServiceIn(cfg *config.Config, scope bool) (int, error) {
	self, err := serviceProgram()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath(cfg)), 0o700); err != nil {
		return 0, err
	}
	// A full log is rotated first, so the lines a failed start quotes are
	// this start's; the service rotates it from then on (--log-file). Output
	// the service cannot route through its logger (a crash) goes to the
	// file that was current when it started.
	if err := servicelog.RotateIfFull(cfg.Service.Log, logPath(cfg)); err != nil {
		fmt.Fprintf(a.Stderr, "warning: could not rotate %s: %s\n", termSafe(logPath(cfg)), termSafe(err.Error()))
	}
	logf, err := os.OpenFile(logPath(cfg), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	var from int64
	if fi, err := logf.Stat(); err == nil {
		from = fi.Size()
	}
	args := []string{"serve", "--no-autostart", "--log-file", logPath(cfg)} // start starts the sessions itself
	if a.ConfigPath != "" {
		args = append([]string{"-c", a.ConfigPath}, args...)
	}
	argv := append([]string{self}, args...)
	if scope {
		argv = scoped(cfg, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if st := a.probe(cfg, 500*time.Millisecond); st.ours {
			return st.health.PID, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("%w (%v); see %s%s", errExitedAtStart, err, logPath(cfg), logTail(logPath(cfg), from))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return cmd.Process.Pid, fmt.Errorf("the service did not answer /api/v1/health on %s within 15s; see %s%s", cfg.SocketPath(), logPath(cfg), logTail(logPath(cfg), from))
}

// logTailLines is how many of the service log's last lines a failed start
// quotes.
const logTailLines = 3

// logTail is ": " and the last lines written to the log at path since
// offset from, joined with " | " ("" when there are none).
func logTail(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const most = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size()-from > most {
		from = fi.Size() - most
	}
	data, err := io.ReadAll(io.NewSectionReader(f, from, most))
	if err != nil && len(data) == 0 {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return ": " + strings.Join(lines[max(0, len(lines)-logTailLines):], " | ")
}

// endService stops the service holding the lock: SIGTERM, then SIGKILL
// after wait. It reports whether there was one.
func endService(cfg *config.Config, wait time.Duration) (bool, error) {
	pid := servicePID(cfg)
	if pid <= 0 {
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, fmt.Errorf("cannot signal the service (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(wait)
	for servicePID(cfg) != 0 {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed := time.Now().Add(5 * time.Second)
			for servicePID(cfg) != 0 {
				if time.Now().After(killed) {
					return true, fmt.Errorf("the service (pid %d) is still running after SIGKILL", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			return true, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true, nil
}
