package runner_test

import (
	"context"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// TestCapture_ReachesIntoHistoryAndDeadPanes: on a real tmux server, a
// capture of more lines than the window holds reaches into the pane's
// history, and a pane whose process exited is still captured.
func TestCapture_ReachesIntoHistoryAndDeadPanes(t *testing.T) {
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	ctx := context.Background()
	const target = "loop-standing-capture"
	// 200 lines, more than the 50-line window; then the process exits.
	if err := r.SpawnIn(ctx, target, loop.SpawnSpec{Argv: []string{"/bin/sh", "-c", "seq 1 200"}, Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, target, loop.PaneDead)
	var lines []string
	testkit.Eventually(t, func() bool {
		var err error
		lines, err = r.Capture(ctx, target, 120)
		return err == nil && len(lines) >= 1 && containsLine(lines, "200")
	}, 10*time.Second, "the capture never showed the last line: %q", lines)
	if len(lines) != 120 {
		t.Fatalf("%d lines, want 120: %q", len(lines), lines)
	}
	// The last 120 non-blank lines end with 200; what tmux adds after the
	// output (remain-on-exit's "Pane is dead" line) may follow it.
	i := indexLine(lines, "200")
	if i < 0 || lines[i-1] != "199" || indexLine(lines, "100") < 0 {
		t.Fatalf("not the history's last lines: %q", lines)
	}
	if _, err := r.Capture(ctx, "loop-standing-nobody", 10); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("capture of a missing session: %v", err)
	}
}

func indexLine(lines []string, want string) int {
	for i, l := range lines {
		if l == want {
			return i
		}
	}
	return -1
}

func containsLine(lines []string, want string) bool { return indexLine(lines, want) >= 0 }
