package testkit

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// FakeTmux is a hand-written stand-in for tmux (a process boundary) for
// unit tests of the packages above the runner: panes are a map, and every
// spawn, delivery and kill is recorded. Tests that change its fields while
// it is in use hold Mu.
type FakeTmux struct {
	Mu        sync.Mutex
	Panes     map[string]loop.PaneState
	Tags      map[string]string // SpawnSpec.Tag per target
	Spawns    []loop.SpawnSpec
	Delivered []string
	Killed    []string
	// OnSpawn, when set, decides the pane state a spawn leaves (live by
	// default).
	OnSpawn func(spec loop.SpawnSpec) loop.PaneState
	// BeforeSpawn, when set, runs first in every spawn, with Mu held (it
	// may change Panes and Tags): an error fails the spawn, which then
	// records nothing — a spawn that lost its name to someone else.
	BeforeSpawn func(target string, spec loop.SpawnSpec) error
	// DeliverHook, when set, runs instead of recording a delivery (a paste
	// that fails or never returns).
	DeliverHook func(ctx context.Context, text string) error
	// Silent makes tmux not answer: every state reads unknown.
	Silent bool
}

// NewFakeTmux returns a FakeTmux with no panes.
func NewFakeTmux() *FakeTmux {
	return &FakeTmux{Panes: map[string]loop.PaneState{}, Tags: map[string]string{}}
}

var (
	_ loop.Runner         = (*FakeTmux)(nil)
	_ loop.WorkItemRunner = (*FakeTmux)(nil)
)

// State reads the pane map (absent when not there).
func (f *FakeTmux) State(_ context.Context, target string) loop.PaneState {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.Silent {
		return loop.PaneUnknown
	}
	if s, ok := f.Panes[target]; ok {
		return s
	}
	return loop.PaneAbsent
}

// States is State for each target.
func (f *FakeTmux) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	out := map[string]loop.PaneState{}
	for _, t := range targets {
		out[t] = f.State(ctx, t)
	}
	return out
}

// SpawnIn records spec and leaves a tagged pane (refused over a live one).
func (f *FakeTmux) SpawnIn(_ context.Context, target string, spec loop.SpawnSpec) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.BeforeSpawn != nil {
		if err := f.BeforeSpawn(target, spec); err != nil {
			return err
		}
	}
	if f.Panes[target] == loop.PaneLive {
		return errors.New("live")
	}
	f.Spawns = append(f.Spawns, spec)
	f.Tags[target] = spec.Tag
	st := loop.PaneLive
	if f.OnSpawn != nil {
		st = f.OnSpawn(spec)
	}
	f.Panes[target] = st
	return nil
}

// DeliverTo records the text, or hands it to DeliverHook when set.
func (f *FakeTmux) DeliverTo(ctx context.Context, _ string, text io.Reader) error {
	b, err := io.ReadAll(text)
	if err != nil {
		return err
	}
	f.Mu.Lock()
	hook := f.DeliverHook
	f.Mu.Unlock()
	if hook != nil {
		return hook(ctx, string(b))
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Delivered = append(f.Delivered, string(b))
	return nil
}

// KillTarget records the kill and removes the pane.
func (f *FakeTmux) KillTarget(_ context.Context, target string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Killed = append(f.Killed, target)
	delete(f.Panes, target)
	return nil
}

// TerminateHarnessIn does nothing.
func (f *FakeTmux) TerminateHarnessIn(context.Context, string, string, time.Duration) error {
	return nil
}

// Snapshot shows a ready prompt.
func (f *FakeTmux) Snapshot(context.Context, string) (loop.PaneSnapshot, error) {
	return loop.PaneSnapshot{Screen: "❯ "}, nil
}

// Tag returns the tag the last spawn set.
func (f *FakeTmux) Tag(_ context.Context, target string) (string, bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.Tags[target], true
}

// SpawnCount is how many spawns were recorded.
func (f *FakeTmux) SpawnCount() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.Spawns)
}

// Messages copies the recorded deliveries.
func (f *FakeTmux) Messages() []string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]string(nil), f.Delivered...)
}

// Spawn is the work-item entry point: SpawnIn on the item's target.
func (f *FakeTmux) Spawn(ctx context.Context, item loop.WorkItemRef, spec loop.SpawnSpec) error {
	return f.SpawnIn(ctx, item.TmuxTarget(), spec)
}

// Deliver keeps the runner's refusal of a session that is not live, then
// delivers to its target.
func (f *FakeTmux) Deliver(ctx context.Context, sess loop.WorkItemTarget, text io.Reader) error {
	if !f.State(ctx, sess.TmuxTarget).LiveOrUnknown() {
		return loop.NotFound("tmux session %s not found", sess.TmuxTarget)
	}
	return f.DeliverTo(ctx, sess.TmuxTarget, text)
}

// Kill is KillTarget on the session's target.
func (f *FakeTmux) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	return f.KillTarget(ctx, sess.TmuxTarget)
}

// TerminateHarness is TerminateHarnessIn with the ref as label.
func (f *FakeTmux) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	return f.TerminateHarnessIn(ctx, sess.TmuxTarget, sess.Ref, grace)
}
