package lifecycle

import (
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/config"
)

// A stop's bound is the kill grace plus 5 s for one session, and 50 ms
// more for each session of a batch beyond the first: a batch's tmux calls
// and hooks queue on one tmux server and the host's cores.
func TestStopBound_GrowsWithTheBatch(t *testing.T) {
	cfg := config.Default()
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 5
	for n, want := range map[int]time.Duration{0: 10 * time.Second, 1: 10 * time.Second, 2: 10*time.Second + 50*time.Millisecond, 201: 20 * time.Second} {
		if got := StopBound(cfg, n); got != want {
			t.Errorf("StopBound of %d sessions: %s, want %s", n, got, want)
		}
	}
}
