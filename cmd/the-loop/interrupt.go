package main

import (
	"context"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// goesOnThere words a verb sent to the service that this CLI stopped
// waiting for (Ctrl-C, SIGTERM): the service runs a verb it has begun to its
// end (verbContext), so the operator is told where to look rather than that
// it failed. Any other error is returned as it is.
func goesOnThere(ctx context.Context, cfg *config.Config, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return loop.Internal("interrupted (%v): this CLI stopped waiting, but the service (%s) goes on with the verb to its end — "+
		"a start there still spawns and records its agent; see `the-loop standing list` or `the-loop events` for how it ended", context.Cause(ctx), serviceURL(cfg))
}

// claimWaitDefault is lifecycle.Service's default ClaimWait: how long a
// verb waits for another process's claim.
const claimWaitDefault = 2 * time.Minute

// verbBound is how long one verb of this CLI may take, in this process or
// as a request to the service: the verb's context deadline
// (services.bound, stopAll) and the sdk client's per-request timeout
// (App.client, the longer bound): a stop, the bound of the largest batch
// (lifecycle.StopBound) plus 10 s;
// any other verb, the wait for another process's claim, the resume probe,
// the ready wait and the submit delay, plus a minute for tmux and the store.
func verbBound(cfg *config.Config, stop bool) time.Duration {
	if stop {
		return lifecycle.StopBound(cfg, lifecycle.MaxStopBatch) + 10*time.Second
	}
	tm := cfg.Routing.Tmux
	return claimWaitDefault + tm.ResumeProbe() + tm.ReadyTimeout() + tm.SubmitDelay() + time.Minute
}
