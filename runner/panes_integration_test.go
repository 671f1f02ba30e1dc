package runner_test

import (
	"context"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// TestPaneStates_ReportsExitStatusAndSignal: one batched query gives each
// dead agent pane's exit status or signal, live and absent panes as States.
func TestPaneStates_ReportsExitStatusAndSignal(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	for target, argv := range map[string][]string{
		"loop-live":   {"sleep", "60"},
		"loop-three":  {"sh", "-c", "exit 3"},
		"loop-zero":   {"sh", "-c", "exit 0"},
		"loop-killed": {"sh", "-c", "kill -9 $$"},
	} {
		if err := r.SpawnIn(ctx, target, loop.SpawnSpec{Argv: argv}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range []string{"loop-three", "loop-zero", "loop-killed"} {
		waitState(t, r, tg, loop.PaneDead)
	}
	got := r.PaneStates(ctx, []string{"loop-live", "loop-three", "loop-zero", "loop-killed", "loop-absent", "not-ours"})
	code := func(tg string) int {
		if got[tg].Code == nil {
			t.Fatalf("%s: no exit status in %+v", tg, got[tg])
		}
		return *got[tg].Code
	}
	if got["loop-live"].State != loop.PaneLive || got["loop-absent"].State != loop.PaneAbsent || got["not-ours"].State != loop.PaneUnknown {
		t.Fatalf("PaneStates = %+v", got)
	}
	if got["loop-three"].State != loop.PaneDead || code("loop-three") != 3 || code("loop-zero") != 0 {
		t.Fatalf("exit statuses %+v", got)
	}
	if k := got["loop-killed"]; k.State != loop.PaneDead || k.Signal != "SIGKILL" || k.Code != nil {
		t.Fatalf("killed pane %+v, want signal 9", k)
	}
}
