package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// launchEnv makes this test binary act as the-loop's internal-exec
// launcher: `env THE_LOOP_RUNNER_TEST_LAUNCH=1 <test binary> FILE`.
const launchEnv = "THE_LOOP_RUNNER_TEST_LAUNCH"

func TestMain(m *testing.M) {
	if os.Getenv(launchEnv) == "1" {
		err := runner.ExecFromFile(os.Args[len(os.Args)-1])
		fmt.Fprintln(os.Stderr, "internal-exec:", err)
		os.Exit(127)
	}
	os.Exit(testkit.Main(m))
}

// lockDirs maps a test's socket to the lock dir its runners share, so test
// runs leave no lock files in the real lock dir.
var lockDirs sync.Map

// lockDirFor returns the delivery lock dir of socket's runners.
func lockDirFor(t testing.TB, socket string) string {
	dir := filepath.Join(os.TempDir(), "the-loop-test-locks-"+socket)
	if _, loaded := lockDirs.LoadOrStore(socket, dir); !loaded {
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	return dir
}

// newRunner is a runner on a private tmux server.
func newRunner(t testing.TB, socket string, opts ...func(*runner.Options)) *runner.Tmux {
	o := runner.Options{Socket: socket, ConfigFile: testkit.TmuxConfig, LockDir: lockDirFor(t, socket),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	for _, f := range opts {
		f(&o)
	}
	return runner.New(o)
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// spawnFake starts agent's `claude` wrapper in target with a fresh id and
// returns the spec it used.
func spawnFake(t testing.TB, r *runner.Tmux, target string, agent *testkit.Agent, extra ...string) loop.SpawnSpec {
	t.Helper()
	argv := append([]string{agent.Path(), "--session-id", uuid.NewString()}, extra...)
	spec := loop.SpawnSpec{Argv: append(argv, "boot prompt for "+target), Cwd: agent.Dir()}
	if err := r.SpawnIn(context.Background(), target, spec); err != nil {
		t.Fatalf("SpawnIn(%s): %v", target, err)
	}
	return spec
}

// waitReady waits for the fake's prompt.
func waitReady(t testing.TB, r *runner.Tmux, target string) {
	t.Helper()
	if err := r.WaitReady(context.Background(), target, testkit.FakeReady, 15*time.Second); err != nil {
		t.Fatal(err)
	}
}

// waitState polls until target reads want.
func waitState(t testing.TB, r *runner.Tmux, target string, want loop.PaneState) {
	t.Helper()
	testkit.Eventually(t, func() bool { return r.State(context.Background(), target) == want },
		10*time.Second, "%s never became %s (now %s)", target, want, r.State(context.Background(), target))
}
