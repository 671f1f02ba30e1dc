package hearing

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/store"
)

// The hearing tests start sessions through lifecycle, as the service does,
// and hear their hooks through a Hearer wired beside it.

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

// newTestService wires a lifecycle.Service on a real bbolt file in a temp
// dir, with a Hearer beside it (its Hearing).
func newTestService(t testing.TB, r *fakeRunner) *lifecycle.Service {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &lifecycle.Service{
		DB:       db,
		Runner:   func(string) loop.Runner { return r },
		Harness:  func(string, string) (loop.Harness, error) { return fakeHarness{}, nil },
		LookPath: func(b string) (string, error) { return "/usr/bin/" + b, nil },
		Source:   "test",
	}
	s.Hearing = hearerFor(s)
	return s
}

// hearerFor is the hearing room beside s, as cmd/the-loop wires it; it
// follows s's Harness, Runner and Clock as a test changes them.
func hearerFor(s *lifecycle.Service) *Hearer {
	return &Hearer{DB: s.DB, Events: s,
		Harness: func(name, subject string) (loop.Harness, error) { return s.Harness(name, subject) },
		Runner:  func(socket string) loop.Runner { return s.Runner(socket) },
		Clock: func() time.Time {
			if s.Clock == nil {
				return time.Now()
			}
			return s.Clock()
		},
		Ended: s.SessionEnded}
}

// hearer is the Hearer newTestService gave s.
func hearer(s *lifecycle.Service) *Hearer { return s.Hearing.(*Hearer) }

// testConfig declares the given sessions (cwd: a temp dir) with a short probe.
func testConfig(t testing.TB, names ...string) *config.Config {
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

func events(t testing.TB, s *lifecycle.Service, q store.EventQuery) []loop.Event {
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

// readStanding is the stored record of name (nil when absent).
func readStanding(t testing.TB, s *lifecycle.Service, name string) *loop.StandingRecord {
	t.Helper()
	var rec *loop.StandingRecord
	if err := s.DB.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Standing(name)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rec
}
