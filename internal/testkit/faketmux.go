package testkit

import (
	"context"
	"errors"
	"strings"
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
	// Pids are the pids of each target's panes (PanePID gives the first,
	// PanePIDs and AllPanePIDs those of live panes): none unless a test
	// sets them, so no pane is any process's.
	Pids map[string][]int
}

// NewFakeTmux returns a FakeTmux with no panes.
func NewFakeTmux() *FakeTmux {
	return &FakeTmux{Panes: map[string]loop.PaneState{}, Tags: map[string]string{}}
}

var _ loop.Runner = (*FakeTmux)(nil)

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

// DeliverTo records the text, or hands it to DeliverHook when set; the
// submit delay is not waited.
func (f *FakeTmux) DeliverTo(ctx context.Context, _, text string, _ time.Duration) error {
	f.Mu.Lock()
	hook := f.DeliverHook
	f.Mu.Unlock()
	if hook != nil {
		return hook(ctx, text)
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Delivered = append(f.Delivered, text)
	return nil
}

// SubmitTo does nothing: the fake's deliveries are always submitted.
func (f *FakeTmux) SubmitTo(context.Context, string) error { return nil }

// PaneStates is States with no exit status reported.
func (f *FakeTmux) PaneStates(ctx context.Context, targets []string) map[string]loop.PaneInfo {
	out := map[string]loop.PaneInfo{}
	for t, st := range f.States(ctx, targets) {
		out[t] = loop.PaneInfo{State: st}
	}
	return out
}

// PanePID is the first of target's Pids; without any it cannot tell
// (EINTERNAL).
func (f *FakeTmux) PanePID(_ context.Context, target string) (int, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if pids := f.Pids[target]; len(pids) > 0 {
		return pids[0], nil
	}
	return 0, loop.Internal("the fake tmux cannot tell the process of %s's pane", target)
}

// PanePIDs is target's Pids while its pane is live (nil otherwise).
func (f *FakeTmux) PanePIDs(_ context.Context, target string) ([]int, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.Panes[target] != loop.PaneLive {
		return nil, nil
	}
	return append([]int(nil), f.Pids[target]...), nil
}

// AllPanePIDs is the Pids of every live pane, by target.
func (f *FakeTmux) AllPanePIDs(context.Context) (map[string][]int, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := map[string][]int{}
	for t, pids := range f.Pids {
		if f.Panes[t] == loop.PaneLive {
			out[t] = append([]int(nil), pids...)
		}
	}
	return out, nil
}

// Capture is the last n lines of the Snapshot's screen, trailing blank
// lines left out: the fake keeps no history.
func (f *FakeTmux) Capture(ctx context.Context, target string, n int) ([]string, error) {
	snap, err := f.Snapshot(ctx, target)
	if err != nil {
		return nil, err
	}
	return screenTail(snap.Screen, n), nil
}

// screenTail is a screen's last n lines, trailing blank lines left out:
// what a Capture of a runner that keeps no history gives.
func screenTail(screen string, n int) []string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
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

// Snapshot shows a ready prompt with the tag the last spawn set, as
// State sees the pane: a pane that is not there is ENOTFOUND, a dead one
// Dead, and a silent tmux or an unknown state an error.
func (f *FakeTmux) Snapshot(_ context.Context, target string) (loop.PaneSnapshot, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	st, ok := f.Panes[target]
	switch {
	case f.Silent || ok && st == loop.PaneUnknown:
		return loop.PaneSnapshot{}, loop.Internal("could not capture tmux session %s: tmux gave no answer", target)
	case !ok || st == loop.PaneAbsent:
		return loop.PaneSnapshot{}, loop.NotFound("tmux session %s not found", target)
	}
	return loop.PaneSnapshot{Screen: "❯ ", Dead: st == loop.PaneDead, Tag: f.Tags[target]}, nil
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
func (f *FakeTmux) Deliver(ctx context.Context, sess loop.WorkItemTarget, text string, submitDelay time.Duration) error {
	if !f.State(ctx, sess.TmuxTarget).LiveOrUnknown() {
		return loop.NotFound("tmux session %s not found", sess.TmuxTarget)
	}
	return f.DeliverTo(ctx, sess.TmuxTarget, text, submitDelay)
}

// Kill is KillTarget on the session's target.
func (f *FakeTmux) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	return f.KillTarget(ctx, sess.TmuxTarget)
}

// TerminateHarness is TerminateHarnessIn with the ref as label.
func (f *FakeTmux) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	return f.TerminateHarnessIn(ctx, sess.TmuxTarget, sess.Ref, grace)
}
