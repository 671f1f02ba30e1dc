//go:build !linux && !darwin

package main

import "context"

// parentGone is ctx, ended by SIGTERM or SIGINT alone where no parent
// watch is written (see parent_linux.go).
func parentGone(ctx context.Context) (context.Context, context.CancelFunc) { return signalled(ctx) }
