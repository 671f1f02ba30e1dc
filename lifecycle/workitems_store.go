package lifecycle

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// This file is the work-item side's plumbing: its transition (the sessions
// bucket's counterpart of Service.transition), reads, claims, and the
// runner's work-item entry points through the liveness cache.

// workItemLock is the per-session lock key of a work item (standing names
// never contain ':', so the keys cannot meet).
func workItemLock(ref loop.WorkItemRef) string { return "workitem:" + ref.Slug() }

// sharedKey refuses a record stored under ref's key that belongs to another
// ref (two refs whose slugs agree).
func sharedKey(ref loop.WorkItemRef, rec *loop.WorkItemRecord) error {
	return loop.Invalid("work item %s shares its session key '%s' with %s, whose session is recorded there "+
		"(their refs differ only in characters the key rewrites); close that session first", ref, ref.Slug(), rec.WorkItem.Ref)
}

// readWorkItem returns ref's record, nil when there is none. A record of
// another ref under the same key is an EINVALID error.
func (s *Service) readWorkItem(ref loop.WorkItemRef) (*loop.WorkItemRecord, error) {
	var rec *loop.WorkItemRecord
	err := s.DB.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Session(ref.Slug())
		return err
	})
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.WorkItem.Ref != ref.String() {
		return nil, sharedKey(ref, rec)
	}
	return rec, nil
}

// workItemRecords lists every work-item record, sorted by key.
func (s *Service) workItemRecords() ([]*loop.WorkItemRecord, error) {
	var recs []*loop.WorkItemRecord
	err := s.DB.View(func(tx *store.Tx) error {
		var err error
		recs, err = tx.ListSessions()
		return err
	})
	return recs, err
}

// workItemTransition is one work-item machine event in one store
// transaction: it re-reads ref's record, refuses an event its state does
// not allow, lets mutate change a copy (mutate may return errStale when the
// record is not what the caller saw), derives status and claim from the
// destination state, writes the record (or deletes it for absent) and
// appends events — all or nothing.
func (s *Service) workItemTransition(ctx context.Context, ref loop.WorkItemRef, event string, mutate func(rec *loop.WorkItemRecord) error, events ...loop.Event) (*loop.WorkItemRecord, error) {
	key := ref.Slug()
	var out *loop.WorkItemRecord
	err := s.DB.Update(func(tx *store.Tx) error {
		cur, err := tx.Session(key)
		if err != nil {
			return err
		}
		if cur != nil && cur.WorkItem.Ref != ref.String() {
			return sharedKey(ref, cur)
		}
		dst, err := NextWorkItem(ctx, WorkItemStateOf(cur), event)
		if err != nil {
			return err
		}
		next := &loop.WorkItemRecord{}
		if cur != nil {
			c := *cur
			c.RecentDeliveries = slices.Clone(cur.RecentDeliveries)
			next = &c
		}
		if mutate != nil {
			if err := mutate(next); err != nil {
				return err
			}
		}
		switch dst {
		case WorkItemAbsent:
			if cur != nil {
				if _, err := tx.DeleteSession(key); err != nil {
					return err
				}
			}
			next = nil
		case WorkItemActive, WorkItemClosed:
			next.Status = dst
			next.Claim = nil
		case WorkItemFirstStart:
			next.Status = ""
		case WorkItemReopening:
			next.Status = loop.SessionClosed
		case WorkItemRespawning:
			next.Status = loop.SessionActive
		}
		if next != nil {
			if got := WorkItemStateOf(next); got != dst {
				return loop.Internal("work item %s: %s moved the record to %q, the machine says %q", ref, event, got, dst)
			}
			next.WorkItem = loop.WorkItemInfo{Ref: ref.String(), Provider: ref.Provider, Owner: ref.Owner, Repo: ref.Repo, Number: ref.Number}
			if next.CreatedAt == "" {
				next.CreatedAt = s.stamp()
			}
			if err := tx.PutSession(key, next); err != nil {
				return err
			}
		}
		for i := range events {
			if err := tx.AppendEvent(&events[i]); err != nil {
				return err
			}
		}
		out = next
		return nil
	})
	return out, err
}

// workItemRunner returns the runner of socket and its work-item entry
// points.
func (s *Service) workItemRunner(socket string) (loop.Runner, loop.WorkItemRunner, error) {
	r := s.Runner(socket)
	wr, ok := r.(loop.WorkItemRunner)
	if !ok {
		return r, nil, loop.Internal("the tmux runner in use has no work-item entry points")
	}
	return r, wr, nil
}

// waitWorkItemClaim polls until ref carries no live claim of another
// process.
func (s *Service) waitWorkItemClaim(ctx context.Context, ref loop.WorkItemRef, c *loop.Claim) error {
	return s.awaitClaim(ctx, "the session of "+ref.String(), c, func() (*loop.Claim, error) {
		rec, err := s.readWorkItem(ref)
		if rec == nil || err != nil {
			return nil, err
		}
		return rec.Claim, nil
	})
}

// settleWorkItemClaim resolves a claim whose process is gone: a start whose
// pane is live is recovered as active (with the conversation id it was
// spawning), anything else is abandoned back to where it came from.
func (s *Service) settleWorkItemClaim(ctx context.Context, ref loop.WorkItemRef, rec *loop.WorkItemRecord) error {
	target := ref.TmuxTarget()
	state := probe(ctx, s.Runner(rec.TmuxSocket), target)
	if state == loop.PaneUnknown {
		return loop.Internal("tmux did not answer whether %s exists; not settling the interrupted %s", target, rec.Claim.Op)
	}
	claim := *rec.Claim
	same := func(r *loop.WorkItemRecord) error {
		if r.Claim == nil || r.Claim.PID != claim.PID || r.Claim.Since != claim.Since {
			return errStale
		}
		return nil
	}
	mine := false
	if state == loop.PaneLive && claim.Op == "start" {
		// Only the harness this claim spawned carries its tag.
		var err error
		if mine, err = ours(ctx, s.Runner(rec.TmuxSocket), target, claim.HarnessSessionID); err != nil {
			return err
		}
	}
	if mine {
		_, err := s.workItemTransition(ctx, ref, WorkItemEvRecover, func(r *loop.WorkItemRecord) error {
			if err := same(r); err != nil {
				return err
			}
			if claim.HarnessSessionID != "" {
				r.HarnessSessionID = claim.HarnessSessionID
			}
			r.TmuxTarget = target
			return nil
		}, s.event("session.recovered", loop.LevelWarning,
			loop.F("work_item", ref.String()), loop.F("tmux_target", target),
			loop.F("harness_session_id", claim.HarnessSessionID),
			loop.F("detail", fmt.Sprintf("a start interrupted in process %d left a live pane; adopted it", claim.PID))))
		return err
	}
	_, err := s.workItemTransition(ctx, ref, WorkItemEvAbandon, same, s.event("session.claim_abandoned", loop.LevelWarning,
		loop.F("work_item", ref.String()), loop.F("op", claim.Op), loop.F("pid", claim.PID)))
	return err
}

// The liveness cache passes the work-item entry points through like every
// other pane-changing call: invalidated before and after, so a verb sees
// its own effects.

var _ loop.WorkItemRunner = (*cachedRunner)(nil)

// workItems returns the wrapped runner's work-item entry points.
func (c *cachedRunner) workItems() (loop.WorkItemRunner, error) {
	if wr, ok := c.inner.(loop.WorkItemRunner); ok {
		return wr, nil
	}
	return nil, loop.Internal("the tmux runner in use has no work-item entry points")
}

// Spawn is the wrapped runner's Spawn.
func (c *cachedRunner) Spawn(ctx context.Context, item loop.WorkItemRef, spec loop.SpawnSpec) error {
	wr, err := c.workItems()
	if err != nil {
		return err
	}
	return c.mutate(func() error { return wr.Spawn(ctx, item, spec) })
}

// Deliver is the wrapped runner's Deliver.
func (c *cachedRunner) Deliver(ctx context.Context, sess loop.WorkItemTarget, text io.Reader) error {
	wr, err := c.workItems()
	if err != nil {
		return err
	}
	return c.mutate(func() error { return wr.Deliver(ctx, sess, text) })
}

// Kill is the wrapped runner's Kill.
func (c *cachedRunner) Kill(ctx context.Context, sess loop.WorkItemTarget) error {
	wr, err := c.workItems()
	if err != nil {
		return err
	}
	return c.mutate(func() error { return wr.Kill(ctx, sess) })
}

// TerminateHarness is the wrapped runner's TerminateHarness.
func (c *cachedRunner) TerminateHarness(ctx context.Context, sess loop.WorkItemTarget, grace time.Duration) error {
	wr, err := c.workItems()
	if err != nil {
		return err
	}
	return c.mutate(func() error { return wr.TerminateHarness(ctx, sess, grace) })
}
