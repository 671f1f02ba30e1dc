package channels

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// fakeRunner is a hand-written stand-in for tmux (a process boundary):
// panes are a map and every delivery is recorded.
type fakeRunner struct {
	mu        sync.Mutex
	panes     map[string]loop.PaneState
	tags      map[string]string // SpawnSpec.Tag per target
	delivered []string
	// deliver, when set, runs instead of recording (a paste that fails or
	// never returns).
	deliver func(ctx context.Context, text string) error
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{panes: map[string]loop.PaneState{}, tags: map[string]string{}}
}

func (f *fakeRunner) State(_ context.Context, target string) loop.PaneState {
	f.mu.Lock()
	defer f.mu.Unlock()
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
	f.panes[target] = loop.PaneLive
	f.tags[target] = spec.Tag
	return nil
}

func (f *fakeRunner) DeliverTo(ctx context.Context, _ string, text io.Reader) error {
	b, err := io.ReadAll(text)
	if err != nil {
		return err
	}
	f.mu.Lock()
	hook := f.deliver
	f.mu.Unlock()
	if hook != nil {
		return hook(ctx, string(b))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered = append(f.delivered, string(b))
	return nil
}

func (f *fakeRunner) KillTarget(_ context.Context, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.panes, target)
	return nil
}

func (f *fakeRunner) TerminateHarnessIn(context.Context, string, string, time.Duration) error {
	return nil
}

func (f *fakeRunner) Snapshot(context.Context, string) (loop.PaneSnapshot, error) {
	return loop.PaneSnapshot{Screen: "❯ "}, nil
}

func (f *fakeRunner) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.delivered...)
}

// fakeHarness builds claude-like argv and is always ready.
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

func (f *fakeRunner) Tag(_ context.Context, target string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tags[target], true
}
