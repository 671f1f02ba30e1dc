package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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

// Issue 16 #4: every verb of the CLI has a bound (its context deadline is
// also the HTTP client's per-request timeout): a stop, the kill grace plus
// 15 s; any other verb, the claim wait plus the tmux waits plus a minute.
func TestVerbBound(t *testing.T) {
	cfg := config.Default()
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 7
	if got := verbBound(cfg, true); got != 22*time.Second {
		t.Fatalf("stop bound %s, want 22s", got)
	}
	tm := cfg.Routing.Tmux
	if got, want := verbBound(cfg, false), 2*time.Minute+tm.ResumeProbe()+tm.ReadyTimeout()+tm.SubmitDelay()+time.Minute; got != want {
		t.Fatalf("verb bound %s, want %s", got, want)
	}
}
