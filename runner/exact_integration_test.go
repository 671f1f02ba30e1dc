package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/runner"
)

// Sessions loop-standing-a and loop-standing-ab: tmux resolves "-t a" to
// "ab" by prefix when no "a" exists; every operation on a must leave ab
// untouched (decisions D9).
func TestExactTargets_OperationsOnALeaveABUntouched(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	const a, ab = "loop-standing-a", "loop-standing-ab"
	abAgent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, ab, abAgent)
	abPid := abAgent.WaitForKind(t, "start", 10*time.Second).Pid
	waitReady(t, r, ab)

	untouched := func(step string) {
		t.Helper()
		if st := r.State(ctx, ab); st != loop.PaneLive {
			t.Fatalf("after %s: %s is %s", step, ab, st)
		}
		if testkit.ProcessGone(abPid) {
			t.Fatalf("after %s: %s's agent is gone", step, ab)
		}
		for _, e := range abAgent.Log() {
			if e.Kind != "start" {
				t.Fatalf("after %s: %s's agent logged %+v", step, ab, e)
			}
		}
	}

	// a is absent.
	if st := r.State(ctx, a); st != loop.PaneAbsent {
		t.Fatalf("State(a) = %s while only ab exists, want absent", st)
	}
	if st := r.States(ctx, []string{a, ab}); st[a] != loop.PaneAbsent || st[ab] != loop.PaneLive {
		t.Fatalf("States = %v", st)
	}
	if _, err := r.Snapshot(ctx, a); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("Snapshot(a) = %v, want ENOTFOUND", err)
	}
	if _, err := r.ExitStatus(ctx, a); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("ExitStatus(a) = %v, want ENOTFOUND", err)
	}
	if err := r.WaitReady(ctx, a, testkit.FakeReady, time.Second); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("WaitReady(a) = %v, want ENOTFOUND", err)
	}
	if err := r.DeliverTo(ctx, a, "for a only", 0); !errors.Is(err, runner.ErrNoSession) {
		t.Fatalf("DeliverTo(a) = %v, want ErrNoSession", err)
	}
	if err := r.KillTarget(ctx, a); !errors.Is(err, runner.ErrNoSession) {
		t.Fatalf("KillTarget(a) = %v, want ErrNoSession", err)
	}
	if err := r.TerminateHarnessIn(ctx, a, "standing:a", 0); err != nil {
		t.Fatalf("TerminateHarnessIn(a) = %v, want nil (already gone)", err)
	}
	untouched("probing, delivering to, killing and terminating an absent a")

	// a spawned while absent, then live.
	aAgent := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, a, aAgent)
	waitReady(t, r, a)
	if err := r.DeliverTo(ctx, a, "for a only", 0); err != nil {
		t.Fatal(err)
	}
	aAgent.WaitForKind(t, "message", 10*time.Second)
	untouched("spawning a and delivering to it")

	// a dead, then respawned over its dead pane.
	if err := r.TerminateHarnessIn(ctx, a, "standing:a", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if st := r.State(ctx, a); st != loop.PaneDead {
		t.Fatalf("State(a) = %s, want dead", st)
	}
	untouched("terminating a")
	spawnFake(t, r, a, aAgent)
	waitState(t, r, a, loop.PaneLive)
	untouched("respawning a over its dead pane")

	if err := r.KillTarget(ctx, a); err != nil {
		t.Fatal(err)
	}
	untouched("killing a")
	if msgs := abAgent.Messages(); len(msgs) != 0 {
		t.Fatalf("ab got messages %q", msgs)
	}
}
