package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// countingTmux counts the fake tmux's queries: one State each, or one
// States for many.
type countingTmux struct {
	*testkit.FakeTmux
	state, states atomic.Int32
}

func (c *countingTmux) State(ctx context.Context, target string) loop.PaneState {
	c.state.Add(1)
	return c.FakeTmux.State(ctx, target)
}

func (c *countingTmux) States(ctx context.Context, targets []string) map[string]loop.PaneState {
	c.states.Add(1)
	return c.FakeTmux.States(ctx, targets)
}

func TestProbes_ConcurrentResumeProbesShareTheirTmuxQueries(t *testing.T) {
	r := &countingTmux{FakeTmux: testkit.NewFakeTmux()}
	e := New(testHost{})
	const n = 20
	for i := range n {
		r.Panes[fmt.Sprintf("loop-standing-s%02d", i)] = loop.PaneLive
	}
	r.Panes["loop-standing-s07"] = loop.PaneDead // a resume that died
	probe := 400 * time.Millisecond
	got := make([]bool, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = e.survives(context.Background(), r, "sock", fmt.Sprintf("loop-standing-s%02d", i), probe)
		}()
	}
	wg.Wait()
	for i, ok := range got {
		if ok != (i != 7) {
			t.Errorf("s%02d survives = %v", i, ok)
		}
	}
	// Each waited its probe; that they ran side by side, not one after
	// another, the shared queries below show (probes one by one share none).
	if took := time.Since(start); took < probe {
		t.Errorf("the probes took %s, less than the %s probe", took, probe)
	}
	// Each probe polls at least 4 times (every 50–150 ms for 400 ms): 80
	// queries one by one. Shared, each aligned poll is one query for all.
	if st, sts := r.state.Load(), r.states.Load(); st != 0 || sts > 20 {
		t.Fatalf("%d State and %d States queries for %d concurrent probes, want a few shared ones", st, sts, n)
	}
}

func TestProbes_APollThatGivesUpReadsUnknown(t *testing.T) {
	r := testkit.NewFakeTmux()
	r.Panes["loop-standing-a"] = loop.PaneDead
	var p probeRounds
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if st := p.paneState(ctx, r, "sock", "loop-standing-a"); st != loop.PaneUnknown && st != loop.PaneDead {
		t.Fatalf("state %s", st)
	}
	if st := p.paneState(context.Background(), r, "sock", "loop-standing-a"); st != loop.PaneDead {
		t.Fatalf("state %s, want dead", st)
	}
}
