package lifecycle

import (
	"context"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/runner"
)

// The liveness cache itself is runner.NewCache (runner/cache_test.go); these
// are the standing verbs through it.

func TestCachedRunner_VerbsSeeTheirOwnEffects(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	cached := runner.NewCache(r, time.Hour) // nothing expires: only invalidation refreshes
	s.Runner = func(string) loop.Runner { return cached }
	cfg := testConfig(t, "supervisor")
	ctx := context.Background()
	rows, err := s.ListStanding(ctx, cfg)
	if err != nil || rows[0].Running {
		t.Fatalf("list before start: %+v %v", rows, err)
	}
	if res, err := s.StartStanding(ctx, cfg, "supervisor", false); err != nil || res.Sessions[0].Outcome != "started" {
		t.Fatalf("start: %+v %v", res, err)
	}
	if rows, _ := s.ListStanding(ctx, cfg); !rows[0].Running {
		t.Fatal("list after start does not see the pane")
	}
	if res, _ := s.StopStanding(ctx, cfg, "supervisor"); res.Sessions[0].Outcome != "stopped" {
		t.Fatalf("stop: %+v", res.Sessions[0])
	}
	if rows, _ := s.ListStanding(ctx, cfg); rows[0].Running {
		t.Fatal("list after stop still sees the pane")
	}
	if res, _ := s.StartStanding(ctx, cfg, "supervisor", false); res.Sessions[0].Outcome != "resumed" {
		t.Fatalf("restart: %+v", res.Sessions[0])
	}
}
