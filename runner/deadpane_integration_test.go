package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// A spawn over a dead agent pane clears that pane only — the
// harness is respawned into it — and the windows an operator opened in the
// session live on.
func TestSpawnIn_DeadPaneKeepsTheOperatorsWindows(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	const target = "loop-standing-deadpane"
	first := testkit.FakeAgent(t, testkit.ExitAfter(0, 3))
	spawnFake(t, r, target, first)
	waitState(t, r, target, loop.PaneDead)
	cat, err := testkit.TmuxRun(socket, "new-window", "-P", "-F", "#{pane_id}", "-t", "="+target+":", "--", "cat")
	if err != nil {
		t.Fatal(err)
	}

	again := testkit.FakeAgent(t, testkit.Delay(0))
	spawnFake(t, r, target, again)
	waitReady(t, r, target)
	again.WaitForKind(t, "start", 10*time.Second)
	panes, err := testkit.TmuxRun(socket, "list-panes", "-s", "-t", "="+target, "-F", "#{pane_id} #{pane_dead}")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(panes, cat+" 0") {
		t.Fatalf("the operator's window %s is gone after the respawn; panes:\n%s", cat, panes)
	}
	if r.State(context.Background(), target) != loop.PaneLive {
		t.Fatalf("the agent pane is %s", r.State(context.Background(), target))
	}
}
