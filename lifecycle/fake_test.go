package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/store"
)

// fakeRunner is the shared hand-written stand-in for tmux.
type fakeRunner = testkit.FakeTmux

func newFakeRunner() *fakeRunner { return testkit.NewFakeTmux() }

// fakeHarness builds claude-like argv and is always ready; it declares
// hooks and reads transcripts as the claude adapter does, the transcripts
// under claudeDir (its CLAUDE_CONFIG_DIR; "" is a home without any).
type fakeHarness struct {
	testkit.FakeHarness
	claudeDir string
}

// claude is the claude adapter whose config directory is f's.
func (f fakeHarness) claude() *harness.Claude {
	home := filepath.Join(os.TempDir(), "the-loop-no-home")
	return harness.NewClaude(harness.ClaudeOptions{Home: home, Env: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return f.claudeDir
		}
		return ""
	}})
}

func (f fakeHarness) WireHooks(w loop.HookWiring) ([]string, map[string]string, error) {
	return f.claude().WireHooks(w)
}

func (f fakeHarness) TokenEntries(cwd, id string, n int) ([]loop.TranscriptEntry, error) {
	return f.claude().TokenEntries(cwd, id, n)
}

func (f fakeHarness) TranscriptMark(cwd, id string) loop.TranscriptMark {
	return f.claude().TranscriptMark(cwd, id)
}

func (f fakeHarness) PromptAfter(m loop.TranscriptMark, sum string) (string, loop.TranscriptMark) {
	return f.claude().PromptAfter(m, sum)
}

func (f fakeHarness) PromptSum(cwd, id, promptID string) string {
	return f.claude().PromptSum(cwd, id, promptID)
}

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

// hearerFor is the hearing room beside s, as cmd/the-loop wires it; it
// follows s's Harness and Runner as a test changes them.
func hearerFor(s *Service) *hearing.Hearer {
	return &hearing.Hearer{DB: s.DB, Events: s,
		Harness: func(name, subject string) (loop.Harness, error) { return s.Harness(name, subject) },
		Runner:  func(socket string) loop.Runner { return s.Runner(socket) },
		Clock:   s.now, Ended: s.SessionEnded}
}

// hookWorld is a started standing session "supervisor" whose spawns
// declare hooks, with a state root of its own, and the Hearer beside it.
type hookWorld struct {
	t   *testing.T
	s   *Service
	h   *hearing.Hearer
	r   *fakeRunner
	cfg *config.Config
	id  string // the recorded conversation
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/opt/the loop/bin/the-loop"
	h := hearerFor(s)
	s.Hearing = h
	cfg := testConfig(t, "supervisor")
	cfg.StateRoot = t.TempDir()
	res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
	if err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	return &hookWorld{t: t, s: s, h: h, r: r, cfg: cfg, id: res.Sessions[0].HarnessSessionID}
}

func (w *hookWorld) record() *loop.StandingRecord {
	w.t.Helper()
	rec, err := w.s.read("supervisor")
	if err != nil || rec == nil {
		w.t.Fatalf("record: %v %v", rec, err)
	}
	return rec
}

func (w *hookWorld) row() loop.StandingRow {
	w.t.Helper()
	row, err := w.s.GetStanding(context.Background(), w.cfg, "supervisor")
	if err != nil {
		w.t.Fatal(err)
	}
	return row
}

// setHarness records the session as one of harness, whose stock adapter
// then reads its hooks.
func (w *hookWorld) setHarness(name string) {
	w.t.Helper()
	fake := w.s.Harness
	w.s.Harness = func(h, subject string) (loop.Harness, error) {
		if h == name {
			return harness.Lookup(h, subject, harness.ClaudeOptions{})
		}
		return fake(h, subject)
	}
	err := w.s.DB.Update(func(tx *store.Tx) error {
		rec, err := tx.Standing("supervisor")
		if err != nil || rec == nil {
			return fmt.Errorf("record: %v %v", rec, err)
		}
		rec.Harness = name
		return tx.PutStanding(rec)
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
