// Package testkit holds helpers for tests across packages: a private tmux
// server per test, the fake agent (internal/fakeagent) behind a `claude`
// wrapper script, and polling helpers.
package testkit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// TmuxConfig is the config file tests run tmux with, so a private server
// ignores the developer's ~/.tmux.conf (runner.Options.ConfigFile).
const TmuxConfig = "/dev/null"

// Tmux returns a tmux socket name private to this test
// ("the-loop-test-<random>") and kills that server (and removes its socket)
// when the test ends. Tests never touch the user's default server. Without
// tmux on PATH the test is skipped, unless CI is set: there it fails.
func Tmux(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed but CI is set: the tmux integration tests must run in CI (%v)", err)
		}
		t.Skipf("tmux is not installed (%v): skipping a test that needs a real tmux server", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	socket := "the-loop-test-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", socket, "-f", TmuxConfig, "kill-server").Run()
		_ = os.Remove(TmuxSocketPath(socket))
	})
	return socket
}

// TmuxSocketPath is where tmux puts the socket named socket:
// $TMUX_TMPDIR (or /tmp)/tmux-<uid>/<socket>.
func TmuxSocketPath(socket string) string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), socket)
}

// TmuxRun runs `tmux -L socket -f /dev/null args…` and returns its
// trimmed stdout, or an error carrying its stderr.
func TmuxRun(socket string, args ...string) (string, error) {
	full := append([]string{"-L", socket, "-f", TmuxConfig}, args...)
	cmd := exec.Command("tmux", full...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return strings.TrimSpace(string(out)), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Eventually polls cond every 10ms until it holds. timeout is how long it
// takes on an idle machine: past it the test logs, once, that it is still
// waiting, and goes on waiting, since a loaded machine is slower and not
// wrong. A little before the test's deadline (go test -timeout) it fails
// the test with the formatted message; a test without a deadline waits
// for ever.
func Eventually(t testing.TB, cond func() bool, timeout time.Duration, format string, args ...any) {
	t.Helper()
	late := nearDeadline(t)
	slow := time.Now().Add(timeout)
	logged := false
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if !logged && time.Now().After(slow) {
			logged = true
			t.Logf("still waiting after %v, longer than on an idle machine: "+format, append([]any{timeout}, args...)...)
		}
		select {
		case <-tick.C:
		case <-late:
			t.Fatalf("still waiting as the test's deadline nears: "+format, args...)
		}
	}
}

// FakeReady is the readiness check tests use with the fake agent: its tty
// is out of canonical mode and its `❯` prompt is on screen (the harness
// package provides the real one for Claude Code).
func FakeReady(s loop.PaneSnapshot) bool {
	return !s.Canonical && strings.Contains(s.Screen, "❯")
}
