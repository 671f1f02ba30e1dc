package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// The service's files under the state root.
func pidPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), "local", "service.pid") }
func logPath(cfg *config.Config) string { return filepath.Join(cfg.StateDir(), "logs", "service.log") }

// serviceURL is where the CLI reaches the service.
func serviceURL(cfg *config.Config) string { return "http://" + cfg.Service.Addr() }

// client is the typed client for the configured service.
func (a *App) client(cfg *config.Config) *loophttp.Client {
	return loophttp.NewClient(serviceURL(cfg), loophttp.ClientOptions{Token: serviceToken(cfg)})
}

// serviceToken is the bearer token the CLI sends (service.tokenEnv).
func serviceToken(cfg *config.Config) string {
	if cfg.Service.TokenEnv == "" {
		return ""
	}
	return os.Getenv(cfg.Service.TokenEnv)
}

// pidLock is the service's single-instance lock: an flock on the pid file,
// held for the service's life.
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		pid, _ := readPID(path)
		return nil, loop.Errorf(loop.EINTERNAL, "the-loop service is already running for this state root (pid %d, %s); stop it with `the-loop stop`", pid, path)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &pidLock{f: f}, nil
}

func (l *pidLock) release() {
	_ = l.f.Truncate(0)
	_ = l.f.Close()
}

// readPID reads the pid file.
func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
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
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0 // nobody holds it
	}
	pid, _ := readPID(path)
	return pid
}

// healthy asks the service for its health within d.
func (a *App) healthy(cfg *config.Config, d time.Duration) (loop.Health, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	h, err := a.client(cfg).Health(ctx)
	return h, err == nil
}

// spawnService starts `the-loop serve` detached, in the caller's working
// directory and environment, and waits up to 15 s for its health.
func (a *App) spawnService(cfg *config.Config) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath(cfg)), 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(logPath(cfg), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	args := []string{"serve"}
	if a.ConfigPath != "" {
		args = append([]string{"-c", a.ConfigPath}, args...)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if h, ok := a.healthy(cfg, 500*time.Millisecond); ok {
			return h.PID, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the service exited at start (%v); see %s", err, logPath(cfg))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return cmd.Process.Pid, fmt.Errorf("the service did not answer %s/api/v1/health within 15s; see %s", serviceURL(cfg), logPath(cfg))
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
