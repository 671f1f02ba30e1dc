package channels

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// A panic in a poll cycle (a store fault) is recovered and
// logged; the poller goroutine, and with it the service, goes on.
func TestPollerRun_RecoversFromAPanic(t *testing.T) {
	w := newWorld(t)
	w.cfg.Slack.IntervalSeconds = 1
	w.poller.Threads = &threadlog.Log{} // no store: the cycle panics on it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.poller.Run(ctx, func() *config.Config { return w.cfg })
	}()
	testkit.Eventually(t, func() bool { return strings.Count(w.logs.String(), "the poller goes on") >= 2 },
		10*time.Second, "the poller did not log two recovered panics: %s", w.logs.String())
	select {
	case <-done:
		t.Fatal("the poller stopped after a panic")
	default:
	}
	cancel()
	<-done
}
