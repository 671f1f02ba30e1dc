package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Lock serialises verbs on one name inside this process.
func (e *Engine) Lock(name string) func() {
	unlock, _ := e.LockCtx(context.Background(), name)
	return unlock
}

// LockCtx is Lock, given up when ctx ends (then the error says another verb
// of this process holds the name): a verb with a bound, stop above all,
// never waits without end behind a start that is stuck.
func (e *Engine) LockCtx(ctx context.Context, name string) (func(), error) {
	e.mu.Lock()
	if e.names == nil {
		e.names = map[string]chan struct{}{}
	}
	m, ok := e.names[name]
	if !ok {
		m = make(chan struct{}, 1)
		e.names[name] = m
	}
	e.mu.Unlock()
	select {
	case m <- struct{}{}:
		return func() { <-m }, nil
	case <-ctx.Done():
		return func() {}, loop.Internal("another verb of this process (pid %d) on '%s' has not finished; gave up waiting for it (%v)", os.Getpid(), name, ctx.Err())
	}
}

// procStart is the host's ProcStart; a host that cannot read start times
// gives start 0 (not known), and ok is whether a process of pid runs
// (signal 0; EPERM, another user's process, is none of ours).
func (e *Engine) procStart(pid int) (start uint64, ok, known bool) {
	if start, ok, known = e.h.ProcStart(pid); known {
		return start, ok, true
	}
	return 0, pid > 0 && syscall.Kill(pid, 0) == nil, false
}

// NewClaim is a claim of this process for op: its pid and that pid's start
// time, so no other process that later holds the pid (after a reboot, say)
// passes for it.
func (e *Engine) NewClaim(op string) *loop.Claim {
	start, _, _ := e.procStart(os.Getpid())
	return &loop.Claim{Op: op, PID: os.Getpid(), PIDStart: start, Since: e.stamp()}
}

// claimLive reports whether a claim belongs to a process that still runs
// it: its pid runs and started when the claim says (the same process, not
// a reused pid), however long the verb has been running. Claims of this
// process are never live here: the per-name lock is held, so one found is
// left by a verb that did not finish. A claim written before claims carried
// a start time, or judged by a service with no ProcStart, is judged by its
// pid, and only for 15 minutes.
func (e *Engine) claimLive(c *loop.Claim) bool {
	if c == nil || c.PID == os.Getpid() || c.PID <= 0 {
		return false
	}
	start, ok, known := e.procStart(c.PID)
	if !ok {
		return false
	}
	if c.PIDStart != 0 && known {
		return start == c.PIDStart
	}
	since, err := time.Parse(loop.RecordTimeFormat, c.Since)
	if err == nil && e.h.Now().Sub(since) > 15*time.Minute {
		return false // a claim of an older version, older than any of its transitions took
	}
	// EPERM: the pid now belongs to another user's process, which cannot be
	// a the-loop verb of ours: the claim is stale.
	return syscall.Kill(c.PID, 0) == nil
}

// awaitClaim polls current until it reports no claim, or only one whose
// process is gone, for at most ClaimWait (default 2 minutes); what names
// the session in the refusal.
func (e *Engine) awaitClaim(ctx context.Context, what string, c *loop.Claim, current func() (*loop.Claim, error)) error {
	wait := e.h.ClaimWait()
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		claim, err := current()
		if err != nil {
			return err
		}
		if claim == nil || !e.claimLive(claim) {
			return nil
		}
		if time.Now().After(deadline) {
			return loop.Internal("%s has had a %s in flight in process %d since %s; try again once it finishes", what, c.Op, c.PID, c.Since)
		}
		select {
		case <-ctx.Done():
			return loop.Internal("%s has had a %s in flight in process %d since %s; gave up waiting for it (%v) — try again once it finishes", what, c.Op, c.PID, c.Since, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ErrStale reports that the record changed between a probe and the
// transition that depended on it: the caller re-evaluates.
var ErrStale = errors.New("the record changed under the verb")
