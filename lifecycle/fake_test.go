package lifecycle

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// fakeRunner is a hand-written stand-in for tmux (the process boundary):
// panes are a map, and every spawn and delivery is recorded.
type fakeRunner struct {
	mu        sync.Mutex
	panes     map[string]loop.PaneState
	tags      map[string]string // SpawnSpec.Tag per target
	spawns    []loop.SpawnSpec
	delivered []string
	killed    []string
	// onSpawn, when set, decides the pane state a spawn leaves.
	onSpawn func(spec loop.SpawnSpec) loop.PaneState
	silent  bool // tmux does not answer
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{panes: map[string]loop.PaneState{}, tags: map[string]string{}}
}

func (f *fakeRunner) State(_ context.Context, target string) loop.PaneState {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.silent {
		return loop.PaneUnknown
	}
	if s, ok := f.panes[target]; ok {
		return s
	}
	return loop.PaneAbsent
}

func (f *fakeRunner) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	out := map[string]loop.PaneState{}
	for _, t := range targets {
		out[t] = f.State(ctx, t)
	}
	return out
}

func (f *fakeRunner) SpawnIn(_ context.Context, target string, spec loop.SpawnSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panes[target] == loop.PaneLive {
		return errors.New("live")
	}
	f.spawns = append(f.spawns, spec)
	f.tags[target] = spec.Tag
	st := loop.PaneLive
	if f.onSpawn != nil {
		st = f.onSpawn(spec)
	}
	f.panes[target] = st
	return nil
}

func (f *fakeRunner) DeliverTo(_ context.Context, target string, text io.Reader) error {
	b, err := io.ReadAll(text)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered = append(f.delivered, string(b))
	return err
}

func (f *fakeRunner) KillTarget(_ context.Context, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = append(f.killed, target)
	delete(f.panes, target)
	return nil
}

func (f *fakeRunner) TerminateHarnessIn(context.Context, string, string, time.Duration) error {
	return nil
}

func (f *fakeRunner) Snapshot(_ context.Context, target string) (loop.PaneSnapshot, error) {
	return loop.PaneSnapshot{Screen: "❯ "}, nil
}

func (f *fakeRunner) spawnCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.spawns)
}

// fakeHarness builds claude-like argv.
type fakeHarness struct{}

func (fakeHarness) Name() string   { return "claude" }
func (fakeHarness) Binary() string { return "claude" }
func (fakeHarness) FreshArgv(id string, args []string, prompt string) ([]string, error) {
	return append(append([]string{"--session-id", id}, args...), prompt), nil
}
func (fakeHarness) ResumeArgv(id string, args []string, prompt string) ([]string, error) {
	return append(append([]string{"--resume", id}, args...), prompt), nil
}
func (fakeHarness) Prepare(string, []string) error { return nil }
func (fakeHarness) Ready(loop.PaneSnapshot) bool   { return true }

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

func (f *fakeRunner) Tag(_ context.Context, target string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tags[target], true
}
