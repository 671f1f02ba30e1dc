package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// The claim/transition engine both machines share: one transition (state
// and events in one store transaction), one stale-claim rule, one wait for
// another process's claim. What differs between standing sessions and work
// items — their record type, bucket, machine table, log-event names and tmux
// target — is a kind: lifecycle's standingKind and workItemKind.

// Kind is one namespace's records as the engine sees them; R is the record
// type (loop.StandingRecord, loop.WorkItemRecord). A Kind names one record.
type Kind[R any] interface {
	// what names the record in messages ("standing session 'x'").
	What() string
	// get reads the record in tx (nil when there is none).
	Get(tx *store.Tx) (*R, error)
	// put writes next, the successor of cur (nil: no record before),
	// stamped with stamp where it is new.
	Put(tx *store.Tx, next, cur *R, stamp string) error
	// del removes the record.
	Del(tx *store.Tx) error
	// copyOf is a copy of cur to change, or a new record when cur is nil.
	CopyOf(cur *R) *R
	// state is the machine state a record is in (nil: absent).
	State(rec *R) string
	// next fires event on the kind's machine rebuilt in state.
	Next(state, event string) (string, error)
	// enter stores the machine state dst (never absent) on rec: the status
	// and whether the claim stays.
	Enter(rec *R, dst string)
	// claim is the record's in-flight claim (nil: none).
	Claim(rec *R) *loop.Claim
	// target is the record's tmux session name; socket the server it runs on.
	Target() string
	Socket(rec *R) string
	// recovered writes an interrupted start's claim into its record when
	// its pane turns out live.
	Recovered(rec *R, c loop.Claim)
	// logEvent is the event-log name of what ("spawn_failed" becomes
	// "standing.spawn_failed"); subject the field naming the record.
	LogEvent(what string) string
	Subject() loop.Field
}

// Read returns k's record, nil when there is none.
func Read[R any](e *Engine, k Kind[R]) (*R, error) {
	var rec *R
	err := e.h.Store().View(func(tx *store.Tx) error {
		var err error
		rec, err = k.Get(tx)
		return err
	})
	return rec, err
}

// ReadAll returns what list reads in one read-only transaction.
func ReadAll[R any](e *Engine, list func(tx *store.Tx) ([]*R, error)) ([]*R, error) {
	var recs []*R
	err := e.h.Store().View(func(tx *store.Tx) error {
		var err error
		recs, err = list(tx)
		return err
	})
	return recs, err
}

// Transition is one machine event in one store transaction: it re-reads
// k's record, refuses an event its state does not allow, lets mutate change
// a copy (mutate may return ErrStale when the record is not what the caller
// saw), derives status and claim from the destination state, writes the
// record (or deletes it for absent), runs also and appends events — all or
// nothing.
func Transition[R any](ctx context.Context, e *Engine, k Kind[R], event string, mutate func(rec *R) error, also func(tx *store.Tx) error, events ...loop.Event) (*R, error) {
	var out *R
	// A batch (store.DB.Batch): concurrent starts, says and stops share
	// commits; the function below may run again and sets only out.
	err := e.h.Store().Batch(func(tx *store.Tx) error {
		out = nil
		cur, err := k.Get(tx)
		if err != nil {
			return err
		}
		dst, err := k.Next(k.State(cur), event)
		if err != nil {
			return err
		}
		next := k.CopyOf(cur)
		if mutate != nil {
			if err := mutate(next); err != nil {
				return err
			}
		}
		if dst == StateAbsent {
			if cur != nil {
				if err := k.Del(tx); err != nil {
					return err
				}
			}
			next = nil
		} else {
			k.Enter(next, dst)
			if got := k.State(next); got != dst {
				return loop.Internal("%s: %s moved the record to %q, the machine says %q", k.What(), event, got, dst)
			}
			if err := k.Put(tx, next, cur, e.stamp()); err != nil {
				return err
			}
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		all := events
		if held := releasedHeld(k, cur, next); len(held) > 0 {
			all = append(slices.Clone(events), held...)
		}
		for i := range all {
			if err := tx.AppendEvent(&all[i]); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	return out, err
}

// releasedHeld is the hooks' events cur's claim held (loop.Claim.Held)
// when the transition to next releases that claim: they follow the
// transition's own events.
func releasedHeld[R any](k Kind[R], cur, next *R) []loop.Event {
	if cur == nil {
		return nil
	}
	c := k.Claim(cur)
	if c == nil || len(c.Held) == 0 {
		return nil
	}
	if next != nil {
		if n := k.Claim(next); n != nil && n.PID == c.PID && n.Since == c.Since {
			return nil // still held
		}
	}
	out := make([]loop.Event, len(c.Held))
	for i, ev := range c.Held {
		ev.Seq = 0 // the log numbers it now
		out[i] = ev
	}
	return out
}

// ClearClaim deals with the claim rec carries: it waits for a live one of
// another process to finish, and settles a stale one (Settle). The caller
// reads the record again afterwards.
func ClearClaim[R any](ctx context.Context, e *Engine, k Kind[R], rec *R) error {
	c := k.Claim(rec)
	if e.claimLive(c) {
		return e.awaitClaim(ctx, k.What(), c, func() (*loop.Claim, error) {
			cur, err := Read(e, k)
			if cur == nil || err != nil {
				return nil, err
			}
			return k.Claim(cur), nil
		})
	}
	if _, err := Settle(ctx, e, k, rec); err != nil && !errors.Is(err, ErrStale) {
		return err
	}
	return nil
}

// Settle resolves a claim whose process is gone (the stale-claim rule): a
// start whose pane is live and carries the tag of the conversation it was
// spawning is recovered with that conversation id; anything else is
// abandoned back to where the claim came from.
func Settle[R any](ctx context.Context, e *Engine, k Kind[R], rec *R) (recovered bool, err error) {
	target := k.Target()
	runner := e.h.Runner(k.Socket(rec))
	claim := *k.Claim(rec)
	state := Probe(ctx, runner, target)
	if state == loop.PaneUnknown {
		return false, loop.Internal("tmux did not answer whether %s exists; not settling the interrupted %s", target, claim.Op)
	}
	same := func(r *R) error {
		if c := k.Claim(r); c == nil || c.PID != claim.PID || c.Since != claim.Since {
			return ErrStale
		}
		return nil
	}
	mine := false
	if state == loop.PaneLive && claim.Op == "start" {
		// Only the harness this claim spawned carries its tag; a placeholder
		// that never became the harness, or someone else's session, does not.
		if mine, err = Ours(ctx, runner, target, claim.HarnessSessionID); err != nil {
			return false, err
		}
	}
	if mine {
		_, err := Transition(ctx, e, k, EvRecover, func(r *R) error {
			if err := same(r); err != nil {
				return err
			}
			k.Recovered(r, claim)
			return nil
		}, nil, e.h.Event(k.LogEvent("recovered"), loop.LevelWarning,
			k.Subject(), loop.F("tmux_target", target),
			loop.F("harness_session_id", claim.HarnessSessionID),
			loop.F("detail", fmt.Sprintf("a start interrupted in process %d left a live pane; adopted it", claim.PID))))
		return err == nil, err
	}
	_, err = Transition(ctx, e, k, EvAbandon, same, nil, e.h.Event(k.LogEvent("claim_abandoned"), loop.LevelWarning,
		k.Subject(), loop.F("op", claim.Op), loop.F("pid", claim.PID)))
	return false, err
}

// Delivered records a paste that happened (a say, a reply): event stamps
// the record and logs ev; a record stopped, closed or claimed meanwhile
// gets ev alone — the paste happened, so the log says so.
func Delivered[R any](ctx context.Context, e *Engine, k Kind[R], event string, stamp func(rec *R), ev loop.Event) error {
	_, err := Transition(ctx, e, k, event, func(r *R) error {
		stamp(r)
		return nil
	}, nil, ev)
	if errors.Is(err, ErrTransition) {
		err = e.h.Emit(ev)
	}
	return err
}

// Stale reports whether a transition lost a race: the record changed
// meanwhile (ErrStale) or its state no longer allows the event; the caller
// evaluates again.
func Stale(err error) bool {
	return errors.Is(err, ErrStale) || errors.Is(err, ErrTransition)
}
