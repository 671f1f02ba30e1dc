package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/config"
)

// Issue 16 #22: a verb sent to the service that the CLI was interrupted
// waiting for says the service goes on with it; a verb not interrupted
// keeps its own error.
func TestGoesOnThere_InterruptedServiceVerb(t *testing.T) {
	cfg := config.Default()
	ctx, cancel := context.WithCancel(context.Background())
	cut := errors.New("Post \"http://127.0.0.1:8787/standing-sessions/control\": context canceled")
	if err := goesOnThere(ctx, cfg, cut); err != cut {
		t.Fatalf("not interrupted: %v", err)
	}
	cancel()
	err := goesOnThere(ctx, cfg, cut)
	if err == nil || !strings.Contains(err.Error(), "goes on with the verb") || !strings.Contains(err.Error(), serviceURL(cfg)) {
		t.Fatalf("interrupted: %v", err)
	}
	if goesOnThere(ctx, cfg, nil) != nil {
		t.Fatal("a verb that finished is not an error")
	}
}
