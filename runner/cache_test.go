package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// fakeRunner is tmux as a map (testkit.FakeTmux).
type fakeRunner = testkit.FakeTmux

func newFakeRunner() *fakeRunner { return testkit.NewFakeTmux() }

// countingRunner counts States queries and can hold them until released.
type countingRunner struct {
	*fakeRunner
	queries atomic.Int32
	// gate, when set, is called by each query with its ordinal (1 for the
	// first); it may block. The ordinal is taken before the query is sent
	// on asked, so a test that has received query n from asked knows that
	// every later query gets a higher one — whichever goroutine reaches the
	// gate first.
	gate  func(n int32)
	asked chan []string // when set, receives each query's targets
}

func (c *countingRunner) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	n := c.queries.Add(1)
	if c.asked != nil {
		c.asked <- targets
	}
	if c.gate != nil {
		c.gate(n)
	}
	return c.fakeRunner.States(ctx, targets)
}

func (c *countingRunner) State(ctx context.Context, target string) loop.PaneState {
	return c.States(ctx, []string{target})[target]
}

// fakeClock is a settable clock for the cache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func newCached(inner loop.Runner) (*cachedRunner, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	c := NewCache(inner, 250*time.Millisecond).(*cachedRunner)
	c.now = clk.now
	return c, clk
}

func TestCachedRunner_AnswersFromOneQueryWithinTTL(t *testing.T) {
	f := newFakeRunner()
	f.Panes["loop-standing-a"] = loop.PaneLive
	f.Panes["loop-standing-b"] = loop.PaneDead
	inner := &countingRunner{fakeRunner: f}
	c, clk := newCached(inner)
	ctx := context.Background()

	got := c.States(ctx, []string{"loop-standing-a", "loop-standing-b", "loop-standing-c"})
	if got["loop-standing-a"] != loop.PaneLive || got["loop-standing-b"] != loop.PaneDead || got["loop-standing-c"] != loop.PaneAbsent {
		t.Fatalf("states %v", got)
	}
	if c.State(ctx, "loop-standing-a") != loop.PaneLive || inner.queries.Load() != 1 {
		t.Fatalf("State within the ttl queried tmux (%d queries)", inner.queries.Load())
	}
	f.Mu.Lock()
	f.Panes["loop-standing-a"] = loop.PaneDead // dies behind our back
	f.Mu.Unlock()
	clk.add(100 * time.Millisecond)
	if c.State(ctx, "loop-standing-a") != loop.PaneLive {
		t.Fatal("a fresh snapshot was not used")
	}
	clk.add(200 * time.Millisecond)
	if c.State(ctx, "loop-standing-a") != loop.PaneDead || inner.queries.Load() != 2 {
		t.Fatalf("after the ttl: %d queries", inner.queries.Load())
	}
}

func TestCachedRunner_ConcurrentCallersShareOneRefresh(t *testing.T) {
	f := newFakeRunner()
	f.Panes["loop-standing-a"] = loop.PaneLive
	hold := make(chan struct{})
	inner := &countingRunner{fakeRunner: f, gate: func(int32) { <-hold }, asked: make(chan []string, 16)}
	c, clk := newCached(inner)
	// Each caller reads the clock once, under the cache's lock, as it
	// decides which refresh to wait for: once all have read it, all have
	// joined the one refresh held in flight.
	var looked atomic.Int32
	c.now = func() time.Time { looked.Add(1); return clk.now() }
	var wg sync.WaitGroup
	results := make([]loop.PaneState, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.State(context.Background(), "loop-standing-a")
		}()
	}
	<-inner.asked
	eventually(t, func() bool { return looked.Load() == int32(len(results)) })
	close(hold)
	wg.Wait()
	if n := inner.queries.Load(); n != 1 {
		t.Fatalf("%d queries for 16 concurrent callers", n)
	}
	for _, r := range results {
		if r != loop.PaneLive {
			t.Fatalf("results %v", results)
		}
	}
}

func TestCachedRunner_MutationInvalidates(t *testing.T) {
	f := newFakeRunner()
	inner := &countingRunner{fakeRunner: f}
	c, _ := newCached(inner)
	ctx := context.Background()
	if c.State(ctx, "loop-standing-a") != loop.PaneAbsent {
		t.Fatal("absent expected")
	}
	if err := c.SpawnIn(ctx, "loop-standing-a", loop.SpawnSpec{Argv: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if c.State(ctx, "loop-standing-a") != loop.PaneLive {
		t.Fatal("the spawn is not seen at once")
	}
	if err := c.KillTarget(ctx, "loop-standing-a"); err != nil {
		t.Fatal(err)
	}
	if c.State(ctx, "loop-standing-a") != loop.PaneAbsent {
		t.Fatal("the kill is not seen at once")
	}
	if n := inner.queries.Load(); n != 3 {
		t.Fatalf("%d queries, want 3", n)
	}
}

func TestCachedRunner_WorkItemEntryPointsInvalidate(t *testing.T) {
	f := newFakeRunner()
	inner := &countingRunner{fakeRunner: f}
	c, _ := newCached(inner)
	ctx := context.Background()
	ref, err := loop.ParseWorkItemRef("github:octo/repo#1")
	if err != nil {
		t.Fatal(err)
	}
	target := ref.TmuxTarget()
	if c.State(ctx, target) != loop.PaneAbsent {
		t.Fatal("absent expected")
	}
	if err := c.Spawn(ctx, ref, loop.SpawnSpec{Argv: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if c.State(ctx, target) != loop.PaneLive {
		t.Fatal("the work item's spawn is not seen at once")
	}
	sess := loop.WorkItemTarget{Ref: ref.String(), TmuxTarget: target}
	if err := c.Kill(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if c.State(ctx, target) != loop.PaneAbsent {
		t.Fatal("the work item's kill is not seen at once")
	}
	if n := inner.queries.Load(); n != 3 {
		t.Fatalf("%d queries, want 3", n)
	}
}

func TestCachedRunner_RefreshInFlightAcrossAChangeIsNotKept(t *testing.T) {
	f := newFakeRunner()
	release := make(chan struct{})
	inner := &countingRunner{fakeRunner: f, asked: make(chan []string, 4)}
	inner.gate = func(n int32) {
		if n == 1 {
			<-release // the first query answers only after the spawn
		}
	}
	c, _ := newCached(inner)
	ctx := context.Background()
	first := make(chan loop.PaneState)
	go func() { first <- c.State(ctx, "loop-standing-a") }()
	<-inner.asked // in flight, before the spawn
	if err := c.SpawnIn(ctx, "loop-standing-a", loop.SpawnSpec{}); err != nil {
		t.Fatal(err)
	}
	got := make(chan loop.PaneState)
	go func() { got <- c.State(ctx, "loop-standing-a") }()
	<-inner.asked // a second query: the in-flight one predates the spawn
	if st := <-got; st != loop.PaneLive {
		t.Fatalf("after the spawn: %s", st)
	}
	close(release)
	<-first
	if c.State(ctx, "loop-standing-a") != loop.PaneLive {
		t.Fatal("the answer from before the spawn replaced the fresh one")
	}
	if n := inner.queries.Load(); n != 2 {
		t.Fatalf("%d queries, want 2", n)
	}
}

func TestCachedRunner_NewTargetIsQueried(t *testing.T) {
	f := newFakeRunner()
	f.Panes["loop-standing-b"] = loop.PaneLive
	inner := &countingRunner{fakeRunner: f}
	c, _ := newCached(inner)
	ctx := context.Background()
	c.State(ctx, "loop-standing-a")
	if c.State(ctx, "loop-standing-b") != loop.PaneLive {
		t.Fatal("a target outside the snapshot was answered from it")
	}
	got := c.States(ctx, []string{"loop-standing-a", "loop-standing-b"})
	if inner.queries.Load() != 2 || got["loop-standing-b"] != loop.PaneLive {
		t.Fatalf("%d queries, %v", inner.queries.Load(), got)
	}
}

func TestCachedRunner_CallerThatGivesUpReadsUnknown(t *testing.T) {
	hold := make(chan struct{})
	inner := &countingRunner{fakeRunner: newFakeRunner(), gate: func(int32) { <-hold }}
	c, _ := newCached(inner)
	defer close(hold)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if st := c.State(ctx, "loop-standing-a"); st != loop.PaneUnknown {
		t.Fatalf("state %s", st)
	}
}

func TestCachedRunner_StatesAnswersStaleWhileRefreshing(t *testing.T) {
	f := newFakeRunner()
	f.Panes["loop-standing-a"] = loop.PaneLive
	release := make(chan struct{})
	inner := &countingRunner{fakeRunner: f, asked: make(chan []string, 4)}
	inner.gate = func(n int32) {
		if n == 2 {
			<-release // the background refresh takes its time
		}
	}
	c, clk := newCached(inner)
	ctx := context.Background()
	targets := []string{"loop-standing-a"}
	c.States(ctx, targets)
	<-inner.asked
	f.Mu.Lock()
	f.Panes["loop-standing-a"] = loop.PaneDead
	f.Mu.Unlock()

	clk.add(300 * time.Millisecond) // past the ttl, within 3×ttl
	if got := c.States(ctx, targets)["loop-standing-a"]; got != loop.PaneLive {
		t.Fatalf("States waited for tmux: %s", got)
	}
	<-inner.asked // …and started a refresh
	if got := c.States(ctx, targets)["loop-standing-a"]; got != loop.PaneLive || inner.queries.Load() != 2 {
		t.Fatalf("a second refresh began: %s, %d queries", got, inner.queries.Load())
	}
	close(release)
	eventually(t, func() bool { return c.States(ctx, targets)["loop-standing-a"] == loop.PaneDead })

	// Past 3×ttl, States waits for a fresh answer.
	f.Mu.Lock()
	f.Panes["loop-standing-a"] = loop.PaneLive
	f.Mu.Unlock()
	clk.add(800 * time.Millisecond)
	if got := c.States(ctx, targets)["loop-standing-a"]; got != loop.PaneLive {
		t.Fatalf("a snapshot older than 3×ttl was used: %s", got)
	}
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
