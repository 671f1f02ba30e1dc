package runner

import (
	"context"
	"maps"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// DefaultLivenessTTL is how old a cached liveness answer may be in the
// service: a pane's death shows in `list` and `status` within it plus one
// tmux query (the B2 bound is 1 s).
const DefaultLivenessTTL = 250 * time.Millisecond

// NewCache wraps r so that State and States answer from one shared
// snapshot, taken with a single r.States call over every target asked about
// recently and refreshed at most every ttl. Concurrent callers that find the
// snapshot stale share one refresh (single flight). Every call that changes a
// pane (SpawnIn, KillTarget, TerminateHarnessIn, DeliverTo, SubmitTo and the
// work-item entry points Spawn, Deliver, Kill, TerminateHarness) invalidates
// the snapshot before and after it runs, and a refresh that was in flight
// across the change is never stored, so a verb always sees its own effects.
// The reads that change nothing (PaneStates, Snapshot, Tag, Capture and the
// pane pids) pass through.
//
// State (what a verb decides on) waits for a snapshot younger than ttl.
// States (what list and status show) may answer from one up to 3×ttl old
// while the refresh it starts runs, so readers do not queue behind tmux: a
// change made outside the-loop shows within 3×ttl plus one query (under the
// 1 s B2 allows at the default ttl).
//
// It is for the long-running service, where `GET /standing-sessions` would
// otherwise run one tmux query per request; a one-shot CLI process gains
// nothing from it. The wrapper is safe for concurrent use.
func NewCache(r loop.Runner, ttl time.Duration) loop.Runner {
	if ttl <= 0 {
		ttl = DefaultLivenessTTL
	}
	return &cachedRunner{inner: r, ttl: ttl, now: time.Now, tracked: map[string]time.Time{}}
}

// trackFor is how long a target asked about once stays in the snapshot.
const trackFor = time.Minute

type cachedRunner struct {
	inner loop.Runner
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	gen     uint64               // bumped by every invalidation
	snap    *liveness            // the newest stored snapshot (nil: none)
	flight  *liveness            // the refresh in flight for gen (nil: none)
	tracked map[string]time.Time // target → when last asked about
}

// liveness is one r.States answer; states is immutable once done is closed.
type liveness struct {
	gen    uint64
	at     time.Time // when the query started
	want   map[string]bool
	states map[string]loop.PaneState
	done   chan struct{}
}

// covers reports whether the snapshot answers every target.
func (l *liveness) covers(targets []string) bool {
	for _, t := range targets {
		if !l.want[t] {
			return false
		}
	}
	return true
}

// staleFactor bounds how old a snapshot States may answer from, in ttls.
const staleFactor = 3

func (c *cachedRunner) State(ctx context.Context, target string) loop.PaneState {
	return c.states(ctx, []string{target}, false)[target]
}

func (c *cachedRunner) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	return c.states(ctx, targets, true)
}

func (c *cachedRunner) states(ctx context.Context, targets []string, stale bool) map[string]loop.PaneState {
	out := make(map[string]loop.PaneState, len(targets))
	if len(targets) == 0 {
		return out
	}
	l := c.lookup(targets, stale)
	select {
	case <-l.done:
	case <-ctx.Done():
		for _, t := range targets {
			out[t] = loop.PaneUnknown
		}
		return out
	}
	for _, t := range targets {
		out[t] = l.states[t]
	}
	return out
}

// lookup returns a snapshot (perhaps still being taken) that answers every
// target, is no older than the last invalidation, and no older than ttl —
// or, with stale, than staleFactor×ttl while a refresh runs.
func (c *cachedRunner) lookup(targets []string, stale bool) *liveness {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, t := range targets {
		c.tracked[t] = now
	}
	s := c.snap
	usable := s != nil && s.gen == c.gen && s.covers(targets)
	if usable && now.Sub(s.at) < c.ttl {
		return s
	}
	f := c.flight
	inFlight := f != nil && f.gen == c.gen
	if usable && stale && now.Sub(s.at) < staleFactor*c.ttl {
		if !inFlight {
			c.start(now)
		}
		return s
	}
	if inFlight && f.covers(targets) {
		return f
	}
	return c.start(now)
}

// start begins a refresh over every target asked about recently; c.mu is
// held.
func (c *cachedRunner) start(now time.Time) *liveness {
	want := make(map[string]bool, len(c.tracked))
	for t, asked := range c.tracked {
		if now.Sub(asked) > trackFor {
			delete(c.tracked, t)
			continue
		}
		want[t] = true
	}
	f := &liveness{gen: c.gen, at: now, want: want, done: make(chan struct{})}
	c.flight = f
	// The query outlives a caller that gives up: others may be waiting on it.
	go c.refresh(f)
	return f
}

// refresh runs the shared query and stores it unless a change happened
// meanwhile.
func (c *cachedRunner) refresh(f *liveness) {
	targets := make([]string, 0, len(f.want))
	for t := range f.want {
		targets = append(targets, t)
	}
	states := c.inner.States(context.Background(), targets)
	f.states = make(map[string]loop.PaneState, len(targets))
	maps.Copy(f.states, states)
	for _, t := range targets {
		if _, ok := f.states[t]; !ok {
			f.states[t] = loop.PaneUnknown
		}
	}
	c.mu.Lock()
	if f.gen == c.gen && (c.snap == nil || !c.snap.at.After(f.at)) {
		c.snap = f
	}
	if c.flight == f {
		c.flight = nil
	}
	c.mu.Unlock()
	close(f.done)
}

// invalidate makes the next State or States query tmux afresh.
func (c *cachedRunner) invalidate() {
	c.mu.Lock()
	c.gen++
	c.snap = nil
	c.mu.Unlock()
}

// mutate runs a pane-changing call between two invalidations.
func (c *cachedRunner) mutate(call func() error) error {
	c.invalidate()
	defer c.invalidate()
	return call()
}

func (c *cachedRunner) SpawnIn(ctx context.Context, target string, spec loop.SpawnSpec) error {
	return c.mutate(func() error { return c.inner.SpawnIn(ctx, target, spec) })
}

func (c *cachedRunner) SubmitTo(ctx context.Context, target string) error {
	return c.mutate(func() error { return c.inner.SubmitTo(ctx, target) })
}

func (c *cachedRunner) DeliverTo(ctx context.Context, target, text string, submitDelay time.Duration) error {
	return c.mutate(func() error { return c.inner.DeliverTo(ctx, target, text, submitDelay) })
}

// PaneStates passes through: exit statuses are read fresh, never from the
// snapshot (which keeps states only).
func (c *cachedRunner) PaneStates(ctx context.Context, targets []string) map[string]loop.PaneInfo {
	return c.inner.PaneStates(ctx, targets)
}

// The pane pids pass through: they change nothing and need no liveness.

func (c *cachedRunner) PanePID(ctx context.Context, target string) (int, error) {
	return c.inner.PanePID(ctx, target)
}

func (c *cachedRunner) PanePIDs(ctx context.Context, target string) ([]int, error) {
	return c.inner.PanePIDs(ctx, target)
}

func (c *cachedRunner) AllPanePIDs(ctx context.Context) (map[string][]int, error) {
	return c.inner.AllPanePIDs(ctx)
}

func (c *cachedRunner) KillTarget(ctx context.Context, target string) error {
	return c.mutate(func() error { return c.inner.KillTarget(ctx, target) })
}

func (c *cachedRunner) TerminateHarnessIn(ctx context.Context, target, label string, grace time.Duration) error {
	return c.mutate(func() error { return c.inner.TerminateHarnessIn(ctx, target, label, grace) })
}

func (c *cachedRunner) Snapshot(ctx context.Context, target string) (loop.PaneSnapshot, error) {
	return c.inner.Snapshot(ctx, target)
}

func (c *cachedRunner) Tag(ctx context.Context, target string) (string, bool) {
	return c.inner.Tag(ctx, target)
}

// The work-item entry points pass through like every other pane-changing
// call: invalidated before and after, so a verb sees its own effects.

func (c *cachedRunner) Spawn(ctx context.Context, item loop.WorkItemRef, spec loop.SpawnSpec) error {
	return c.mutate(func() error { return c.inner.Spawn(ctx, item, spec) })
}

func (c *cachedRunner) Deliver(ctx context.Context, sess loop.WorkItemTarget, text string, submitDelay time.Duration) error {
	return c.mutate(func() error { return c.inner.Deliver(ctx, sess, text, submitDelay) })
}

func (c *cachedRunner) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	return c.mutate(func() error { return c.inner.Kill(ctx, sess) })
}

func (c *cachedRunner) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	return c.mutate(func() error { return c.inner.TerminateHarness(ctx, sess, grace) })
}
