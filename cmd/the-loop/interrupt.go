package main

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// goesOnThere words a verb sent to the service that this CLI stopped
// waiting for (Ctrl-C, SIGTERM): the service runs a verb it has begun to its
// end (verbContext), so the operator is told where to look rather than that
// it failed. Any other error is returned as it is.
func goesOnThere(ctx context.Context, cfg *config.Config, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return loop.Internal("interrupted: this CLI stopped waiting, but the service (%s) goes on with the verb to its end — "+
		"a start there still spawns and records its agent; see `the-loop standing list` or `the-loop events` for how it ended", serviceURL(cfg))
}
