package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/config"
)

// A verb sent to the service that the CLI was interrupted
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

// Every verb of the CLI has a bound (its context deadline is
// also the HTTP client's per-request timeout): a stop, the kill grace plus
// 15 s; any other verb, the claim wait plus the tmux waits plus a minute.
func TestVerbBound(t *testing.T) {
	cfg := config.Default()
	cfg.Routing.Tmux.HarnessKillGraceSeconds = 7
	// the kill grace, 5 s, 50 ms a session beyond the first of the largest
	// batch (1,000), and 10 s for what runs past the rows' bound
	if got, want := verbBound(cfg, true), 7*time.Second+5*time.Second+999*50*time.Millisecond+10*time.Second; got != want {
		t.Fatalf("stop bound %s, want %s", got, want)
	}
	tm := cfg.Routing.Tmux
	if got, want := verbBound(cfg, false), 2*time.Minute+tm.ResumeProbe()+tm.ReadyTimeout()+tm.SubmitDelay()+time.Minute; got != want {
		t.Fatalf("verb bound %s, want %s", got, want)
	}
}

// The services picked once carry the verb's bound and word its end: the
// context ends at verbBound; a verb the service was asked for
// and this CLI stopped waiting for goes on there (#22); a stop of a newer
// store ends with that refusal, after the verb's own failure if any (#13).
func TestServices_BoundAndFinish(t *testing.T) {
	cfg := config.Default()
	for _, stop := range []bool{false, true} {
		ctx, cancel := services{cfg: cfg}.bound(stop)
		deadline, ok := ctx.Deadline()
		cancel()
		if left := time.Until(deadline); !ok || left > verbBound(cfg, stop) || left < verbBound(cfg, stop)-time.Minute {
			t.Fatalf("stop %v: deadline %v (%v), want about %s from now", stop, deadline, ok, verbBound(cfg, stop))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := errors.New("context canceled")
	if err := (services{cfg: cfg, remote: true}).finish(ctx, io.Discard, cut); err == nil || !strings.Contains(err.Error(), "goes on with the verb") {
		t.Fatalf("remote, interrupted: %v", err)
	}
	if err := (services{cfg: cfg}).finish(ctx, io.Discard, cut); err != cut {
		t.Fatalf("local, interrupted: %v, want the verb's own error", err)
	}
	newer := errors.New("the store is newer")
	if err := (services{cfg: cfg, newer: newer}).finish(context.Background(), io.Discard, nil); err != newer {
		t.Fatalf("newer store, stop done: %v, want the refusal", err)
	}
	var stderr strings.Builder
	if err := (services{cfg: cfg, newer: newer}).finish(context.Background(), &stderr, cut); err != cut || !strings.Contains(stderr.String(), "the store is newer") {
		t.Fatalf("newer store, stop failed: %v, stderr %q", err, stderr.String())
	}
}

// A say or reply with --wait is bounded by its
// answer wait plus the ready and submit waits and 5 s, not verbBound, and
// the sdk client's per-request timeout lets a request last that long.
func TestWaitBound_WaitingSay(t *testing.T) {
	cfg := config.Default()
	tm := cfg.Routing.Tmux
	if got := waitBound(cfg, 0); got != 0 {
		t.Fatalf("no wait: bound %s, want 0 (verbBound applies)", got)
	}
	want := 10*time.Minute + tm.ReadyTimeout() + tm.SubmitWait() + 5*time.Second
	if got := waitBound(cfg, 10*time.Minute); got != want {
		t.Fatalf("wait 10m: bound %s, want %s", got, want)
	}
	if want <= verbBound(cfg, false) {
		t.Fatalf("test premise: %s should exceed verbBound %s", want, verbBound(cfg, false))
	}
	ctx, cancel := services{cfg: cfg, wait: want}.bound(false)
	deadline, ok := ctx.Deadline()
	cancel()
	if left := time.Until(deadline); !ok || left > want || left < want-time.Minute {
		t.Fatalf("waiting say: deadline %v (%v), want about %s from now", deadline, ok, want)
	}
	if got := requestTimeout(cfg, want); got != want {
		t.Fatalf("client timeout %s, want the waiting say's bound %s", got, want)
	}
	if got := requestTimeout(cfg, 0); got != verbBound(cfg, false) {
		t.Fatalf("client timeout %s, want verbBound %s", got, verbBound(cfg, false))
	}
}
