package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// PanePID names the agent pane's own process: the pid the fake logged at
// its start (the launcher and the wrapper exec it in place), and a missing
// session is ENOTFOUND.
func TestPanePID_IsTheAgentProcess(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-pid", agent)
	start := agent.WaitForKind(t, "start", 15*time.Second)
	pid, err := r.PanePID(context.Background(), "loop-standing-pid")
	if err != nil {
		t.Fatal(err)
	}
	if pid != start.Pid {
		t.Fatalf("PanePID = %d, the agent logged pid %d", pid, start.Pid)
	}
	cached := runner.NewCache(r, 0)
	if got, err := cached.PanePID(context.Background(), "loop-standing-pid"); err != nil || got != pid {
		t.Fatalf("the cache's PanePID = %d, %v; want %d", got, err, pid)
	}
	if _, err := r.PanePID(context.Background(), "loop-standing-nosuch"); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("PanePID of a missing session: %v, want ENOTFOUND", err)
	}
}

// DeliverTo waits the delivery's own submit delay when it is longer than
// the runner's, and the runner's when it is shorter; the message arrives
// either way.
func TestDeliverTo_WaitsTheLongerDelay(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	var mu sync.Mutex
	var slept []time.Duration
	r := newRunner(t, socket, func(o *runner.Options) {
		o.SubmitDelay = 50 * time.Millisecond
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
			time.Sleep(d) // the wait itself still happens: the paste must settle before the submit key
			return nil
		}
	})
	agent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, "loop-standing-slow", agent)
	waitReady(t, r, "loop-standing-slow")
	if err := r.DeliverTo(context.Background(), "loop-standing-slow", "slow one", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := r.DeliverTo(context.Background(), "loop-standing-slow", "quick one", 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// A work item's delivery through the cache takes its own delay too.
	cached := runner.NewCache(r, 0)
	if err := cached.Deliver(context.Background(), loop.WorkItemTarget{Ref: "o/r#1", TmuxTarget: "loop-standing-slow"}, "item one", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := cached.Deliver(context.Background(), loop.WorkItemTarget{Ref: "o/r#1"}, "x", time.Second); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("a work item without a tmux session: %v, want ENOTFOUND", err)
	}
	testkit.Eventually(t, func() bool { return len(agent.Messages()) == 3 }, 15*time.Second, "messages: %q", agent.Messages())
	mu.Lock()
	defer mu.Unlock()
	var delays []time.Duration
	for _, d := range slept {
		if d == 250*time.Millisecond || d == 50*time.Millisecond {
			delays = append(delays, d)
		}
	}
	if len(delays) < 3 || delays[len(delays)-3] != 250*time.Millisecond || delays[len(delays)-2] != 50*time.Millisecond || delays[len(delays)-1] != 250*time.Millisecond {
		t.Fatalf("submit delays slept: %v, want 250ms, 50ms, 250ms", slept)
	}
}
