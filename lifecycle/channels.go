package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// Threads returns every bound thread with its cursor, oldest binding first
// (what one inbound poll cycle reads), each marked Closed when its work
// item's session is closed (loop.ThreadLog).
func (s *Service) Threads(_ context.Context) ([]loop.BoundThread, error) {
	var out []loop.BoundThread
	err := s.DB.View(func(tx *store.Tx) error {
		all, err := tx.Threads()
		if err != nil {
			return err
		}
		recs, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		closed := map[string]bool{}
		for _, r := range recs {
			if r.Status == loop.SessionClosed {
				closed[r.WorkItem.Ref] = true
			}
		}
		for _, b := range all {
			out = append(out, loop.BoundThread{ThreadTS: b.ThreadTS, Ref: b.Ref, Channel: b.Channel,
				Cursor: tx.Cursor(b.ThreadTS), Closed: b.Ref != "" && closed[b.Ref]})
		}
		return nil
	})
	return out, err
}

// RecordReply takes the reply ts of thread threadTS for processing, at most
// once (decisions D25; loop.ThreadLog). In one transaction it resolves the
// thread's binding now (not as it was when the reply was read), advances
// the thread's cursor to ts and appends the events decide returns for the
// bound ref — all or nothing, and before anything is delivered, so a crash
// after it loses the reply rather than delivering it twice.
//
// taken is false, and nothing is written, when the cursor is already at or
// past ts (another cycle took the reply). A thread no longer bound (its
// session was deleted meanwhile) has no cursor to advance: decide gets ref
// "" and its events are appended.
//
// decide runs inside the write transaction: it must only build events.
func (s *Service) RecordReply(_ context.Context, threadTS, ts string, decide func(ref string) []loop.Event) (ref string, taken bool, err error) {
	err = s.DB.Update(func(tx *store.Tx) error {
		ref, taken = "", false
		all, err := tx.Threads()
		if err != nil {
			return err
		}
		bound := false
		for _, b := range all {
			if b.ThreadTS == threadTS {
				ref, bound = b.Ref, true
			}
		}
		if bound { // a tombstone ("" ref) keeps its cursor too: dropped once
			before := tx.Cursor(threadTS)
			if err := tx.Advance(threadTS, ts); err != nil {
				return err
			}
			if tx.Cursor(threadTS) == before {
				return nil // at or before the cursor: already taken
			}
		}
		taken = true
		evs := decide(ref)
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return ref, taken, nil
}

// NewEvent builds an event stamped with this service's clock, source and
// pid, for Emit or RecordReply (loop.EventWriter).
func (s *Service) NewEvent(name, level string, fields ...loop.Field) loop.Event {
	return s.event(name, level, fields...)
}

// PendingReplies returns the Slack replies kept for sessions that could not
// take them yet, oldest first.
func (s *Service) PendingReplies(_ context.Context) ([]loop.PendingReply, error) {
	var out []loop.PendingReply
	err := s.DB.View(func(tx *store.Tx) error {
		var err error
		out, err = tx.PendingReplies()
		return err
	})
	return out, err
}

// Waiting is how many replies thread keeps for its session: a new reply
// there waits behind them, so that they reach the pane in order.
func (s *Service) Waiting(_ context.Context, thread string) (int, error) {
	n := 0
	err := s.DB.View(func(tx *store.Tx) error {
		var err error
		n, err = tx.Waiting(thread)
		return err
	})
	return n, err
}

// KeepReply keeps pr for a later delivery (store.Tx.QueueReply) and
// appends kept in the same transaction. When its thread or the store keeps
// as many replies as they may (store.MaxPendingPerThread,
// store.MaxPending), nothing is kept, full is appended instead and kept
// is false. A reply taken by TakeReply goes back in its place (pr.Seq set).
func (s *Service) KeepReply(_ context.Context, pr loop.PendingReply, kept, full []loop.Event) (bool, error) {
	ok := false
	err := s.DB.Update(func(tx *store.Tx) error {
		var err error
		if ok, err = tx.QueueReply(&pr); err != nil {
			return err
		}
		evs := kept
		if !ok {
			evs = full
		}
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return ok, nil
}

// TakeReply takes the reply kept under seq for a delivery attempt: in one
// transaction it removes it, resolves its thread's binding now (ref "" for
// a thread unbound or a tombstone) and appends the events decide returns —
// before anything is pasted, so a crash after it loses the reply rather
// than delivering it twice (decisions D25). It returns nil when another
// cycle took the reply. decide runs inside the write transaction: it must
// only build events.
func (s *Service) TakeReply(_ context.Context, seq uint64, decide func(pr loop.PendingReply, ref string) []loop.Event) (*loop.PendingReply, string, error) {
	var taken *loop.PendingReply
	ref := ""
	err := s.DB.Update(func(tx *store.Tx) error {
		taken, ref = nil, ""
		pr, err := tx.TakeReply(seq)
		if err != nil || pr == nil {
			return err
		}
		if b, ok := tx.Binding(pr.Thread); ok {
			ref = b.Ref
		}
		evs := decide(*pr, ref)
		for i := range evs {
			if err := tx.AppendEvent(&evs[i]); err != nil {
				return err
			}
		}
		taken = pr
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return taken, ref, nil
}

// Events returns the events q selects, oldest first (loop.EventLog); q's
// since is read against this service's clock.
func (s *Service) Events(_ context.Context, q loop.EventQuery) ([]loop.Event, error) {
	since, err := store.ParseSince(q.Since, s.now())
	if err != nil {
		return nil, err
	}
	var evs []loop.Event
	err = s.DB.View(func(tx *store.Tx) error {
		evs, err = tx.Events(store.EventQuery{Types: q.Types, Standing: q.Standing, WorkItem: q.WorkItem,
			MinLevel: q.Level, Since: since, Limit: q.Limit, After: q.After, Forward: q.Forward})
		return err
	})
	return evs, err
}

// WorkItemOpen reports whether the work item ref has a session that is not
// closed (one that may come back: its pane died, or its agent is busy).
func (s *Service) WorkItemOpen(_ context.Context, ref string) bool {
	item, err := loop.ParseWorkItemRef(ref)
	if err != nil {
		return false
	}
	open := false
	_ = s.DB.View(func(tx *store.Tx) error {
		rec, err := tx.WorkItem(item.Slug())
		open = err == nil && rec != nil && rec.Status != loop.SessionClosed
		return nil
	})
	return open
}
