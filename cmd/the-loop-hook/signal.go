package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalled is ctx ended by SIGTERM or SIGINT: the CLI's end of a hook
// (a key answered its dialog), after which the hook prints nothing.
func signalled(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
}
