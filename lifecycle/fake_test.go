package lifecycle

import (
	"path/filepath"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/store"
)

// fakeRunner is the shared hand-written stand-in for tmux.
type fakeRunner = testkit.FakeTmux

func newFakeRunner() *fakeRunner { return testkit.NewFakeTmux() }

// fakeHarness builds claude-like argv and is always ready.
type fakeHarness = testkit.FakeHarness

// newTestService wires a Service on a real bbolt file in a temp dir.
func newTestService(t *testing.T, r *fakeRunner) *Service {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Service{
		DB:       db,
		Runner:   func(string) loop.Runner { return r },
		Harness:  func(string, string) (loop.Harness, error) { return fakeHarness{}, nil },
		LookPath: func(b string) (string, error) { return "/usr/bin/" + b, nil },
		Source:   "test",
		// As cmd/the-loop wires it: claims judged by pid and start time.
		ProcStart: runner.ProcessStart,
	}
}

// testConfig declares the given sessions (cwd: a temp dir) with a short probe.
func testConfig(t *testing.T, names ...string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Routing.Tmux.ResumeProbeSeconds = 0.05
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 0
	cfg.Routing.Tmux.ReadySeconds = 1
	dir := t.TempDir()
	cfg.Standing = &config.StandingConfig{Enabled: true}
	for _, n := range names {
		cfg.Standing.Sessions = append(cfg.Standing.Sessions, loop.StandingDefinition{
			Name: n, Harness: "claude", Cwd: dir, AutoStart: true, Declared: true,
		})
	}
	return cfg
}

func events(t *testing.T, s *Service, q store.EventQuery) []loop.Event {
	t.Helper()
	var evs []loop.Event
	if err := s.DB.View(func(tx *store.Tx) error {
		var err error
		evs, err = tx.Events(q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func eventNames(evs []loop.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}
